#include "ingot/generation/manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"

namespace ingot::generation {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Typed reads of one JSON object, each failure an IoError naming the file and the field.
class Fields {
 public:
  Fields(const json& j, const std::string& source, std::string path)
      : j_(j), source_(source), path_(std::move(path)) {
    INGOT_CHECK(j.is_object(), IoError, "[generation manifest] '{}': {} must be an object", source_,
                path_.empty() ? "the manifest" : path_);
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& at(const char* key) const {
    INGOT_CHECK(j_.contains(key), IoError, "[generation manifest] '{}': {} is missing", source_,
                name(key));
    return j_.at(key);
  }
  std::string text(const char* key) const {
    const json& v = at(key);
    INGOT_CHECK(v.is_string(), IoError, "[generation manifest] '{}': {} must be a string", source_,
                name(key));
    return v.get<std::string>();
  }
  int64_t integer(const char* key) const {
    const json& v = at(key);
    INGOT_CHECK(v.is_number_integer(), IoError, "[generation manifest] '{}': {} must be an integer",
                source_, name(key));
    return v.get<int64_t>();
  }
  int64_t integer_or(const char* key, int64_t fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    INGOT_CHECK(v.is_boolean(), IoError, "[generation manifest] '{}': {} must be true or false",
                source_, name(key));
    return v.get<bool>();
  }
  std::vector<std::string> texts(const char* key) const {
    const json& v = at(key);
    INGOT_CHECK(v.is_array() &&
                    std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); }),
                IoError, "[generation manifest] '{}': {} must be a list of strings", source_,
                name(key));
    return v.get<std::vector<std::string>>();
  }
  std::vector<int64_t> integers(const char* key) const {
    const json& v = at(key);
    INGOT_CHECK(
        v.is_array() &&
            std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); }),
        IoError, "[generation manifest] '{}': {} must be a list of integers", source_, name(key));
    return v.get<std::vector<int64_t>>();
  }
  Fields object(const char* key) const {
    return Fields(at(key), source_, path_.empty() ? std::string(key) : path_ + "." + key);
  }
  std::string name(const std::string& key) const {
    return path_.empty() ? "\"" + key + "\"" : path_ + "." + key;
  }
  const std::string& source() const { return source_; }
  const json& value() const { return j_; }

 private:
  const json& j_;
  const std::string& source_;
  std::string path_;
};

json steps_to_json(const std::vector<PipelineStep>& steps) {
  json out = json::array();
  for (const PipelineStep& s : steps) {
    json step;
    if (!s.component.empty()) step["component"] = s.component;
    if (!s.derive.empty()) step["derive"] = s.derive;
    if (!s.merge.empty()) step["merge"] = s.merge;
    step["inputs"] = s.inputs;
    step["outputs"] = s.outputs;
    out.push_back(step);
  }
  return out;
}

std::vector<PipelineStep> steps_from(const Fields& pipeline) {
  std::vector<PipelineStep> steps;
  if (!pipeline.has("steps")) return steps;
  const json& list = pipeline.at("steps");
  INGOT_CHECK(list.is_array(), IoError, "[generation manifest] '{}': {} must be a list",
              pipeline.source(), pipeline.name("steps"));
  for (size_t i = 0; i < list.size(); ++i) {
    Fields f(list[i], pipeline.source(), pipeline.name("steps") + "[" + std::to_string(i) + "]");
    PipelineStep s;
    if (f.has("component")) s.component = f.text("component");
    if (f.has("derive")) s.derive = f.text("derive");
    if (f.has("merge")) s.merge = f.text("merge");
    s.inputs = f.texts("inputs");
    s.outputs = f.texts("outputs");
    steps.push_back(std::move(s));
  }
  return steps;
}

VisionLanguagePipeline vision_language_from(const Fields& p) {
  VisionLanguagePipeline v;
  v.image_token_id = p.integer("image_token_id");
  v.tokens_per_image = p.integer_or("tokens_per_image", 0);
  const Fields image = p.object("image_input");
  v.image_input.patches = image.has("kind") && image.text("kind") == "patches";
  v.image_input.channels = image.integer("channels");
  if (v.image_input.patches) {
    v.image_input.patch_dim = image.integer("patch_dim");
    v.image_input.spatial_merge_size = image.integer("spatial_merge_size");
    INGOT_CHECK(v.image_input.spatial_merge_size > 0, IoError,
                "[generation manifest] '{}': pipeline.image_input.spatial_merge_size must be > 0",
                p.source());
  } else {
    v.image_input.height = image.integer("height");
    v.image_input.width = image.integer("width");
  }
  const Fields table = p.object("embed_tokens");
  v.embed_tokens_component = table.text("component");
  v.embed_tokens_tensor = table.text("tensor");
  v.mrope = p.has("rope") && p.text("rope") == "mrope";
  v.steps = steps_from(p);
  return v;
}

EncoderDecoderPipeline encoder_decoder_from(const Fields& p) {
  EncoderDecoderPipeline e;
  e.encoder_input = p.text("encoder_input");
  e.decoder_prompt = p.integers("decoder_prompt");
  INGOT_CHECK(!e.decoder_prompt.empty(), IoError,
              "[generation manifest] '{}': pipeline.decoder_prompt is empty; it starts with "
              "decoder_start_token_id",
              p.source());
  e.steps = steps_from(p);
  return e;
}

StepLayout layout_from(const json& list, const std::string& source, const std::string& component) {
  const std::string where = "inputs." + component;
  INGOT_CHECK(list.is_array(), IoError, "[generation manifest] '{}': {} must be a list", source,
              where);
  StepLayout layout;
  for (size_t i = 0; i < list.size(); ++i) {
    Fields f(list[i], source, where + "[" + std::to_string(i) + "]");
    const std::string role = f.text("role");
    std::optional<InputRole> r = role_from_name(role);
    INGOT_CHECK(r.has_value(), IoError,
                "[generation manifest] '{}': {} has the unknown role '{}' (a newer ingot's "
                "manifest? re-export with this one)",
                source, f.name("role"), role);
    layout.inputs.push_back({f.text("name"), *r, f.integer_or("layer", -1)});
  }
  return layout;
}

}  // namespace

PipelineKind GenerationManifest::kind() const {
  if (vision_language) return PipelineKind::kVisionLanguage;
  if (encoder_decoder) return PipelineKind::kEncoderDecoder;
  return PipelineKind::kDecoderOnly;
}

const StepLayout& GenerationManifest::layout(const std::string& component) const {
  auto it = components.find(component);
  if (it != components.end()) return it->second.layout;
  std::vector<std::string> names;
  for (const auto& [name, c] : components) names.push_back(name);
  INGOT_THROW(ValueError, "[generation manifest] no component '{}' (components: {})", component,
              fmt::join(names, ", "));
}

json GenerationManifest::to_json() const {
  json j = {{"format", kManifestFormat},
            {"version", version},
            {"export_format", export_format},
            {"architecture", architecture},
            {"max_cache_len", max_cache_len},
            {"multi_token_decode", multi_token_decode},
            {"dynamic_cache_len", dynamic_cache_len},
            {"batch", batch}};
  j["components"] = json::object();
  j["inputs"] = json::object();
  for (const auto& [name, c] : components) {
    j["components"][name] = c.file;
    json inputs = json::array();
    for (const StepInput& in : c.layout.inputs) {
      json e = {{"name", in.name}, {"role", std::string(role_name(in.role))}};
      if (in.layer >= 0) e["layer"] = in.layer;
      inputs.push_back(e);
    }
    j["inputs"][name] = inputs;
  }
  if (vision_language) {
    const VisionLanguagePipeline& v = *vision_language;
    const ImageInputSpec& im = v.image_input;
    json image = im.patches
                     ? json{{"kind", "patches"},
                            {"channels", im.channels},
                            {"patch_dim", im.patch_dim},
                            {"spatial_merge_size", im.spatial_merge_size}}
                     : json{{"channels", im.channels}, {"height", im.height}, {"width", im.width}};
    j["pipeline"] = {{"kind", "vision-language"},
                     {"image_token_id", v.image_token_id},
                     {"tokens_per_image", v.tokens_per_image},
                     {"image_input", image},
                     {"embed_tokens",
                      {{"component", v.embed_tokens_component}, {"tensor", v.embed_tokens_tensor}}},
                     {"steps", steps_to_json(v.steps)}};
    if (v.mrope) j["pipeline"]["rope"] = "mrope";
  } else if (encoder_decoder) {
    j["pipeline"] = {{"kind", "encoder-decoder"},
                     {"encoder_input", encoder_decoder->encoder_input},
                     {"decoder_prompt", encoder_decoder->decoder_prompt},
                     {"steps", steps_to_json(encoder_decoder->steps)}};
  }
  return j;
}

GenerationManifest GenerationManifest::from_json(const json& j, const std::string& source) {
  const Fields f(j, source, "");
  INGOT_CHECK(f.has("format") && f.at("format").is_string() && f.text("format") == kManifestFormat,
              IoError,
              "[generation manifest] '{}' is not an ingot generation manifest (its "
              "\"format\" must be \"{}\")",
              source, kManifestFormat);
  INGOT_CHECK(f.has("version") && f.at("version").is_number_integer(), IoError,
              "[generation manifest] '{}' has no integer \"version\"", source);
  const int64_t version = f.integer("version");
  INGOT_CHECK(version <= kManifestVersion, IoError,
              "[generation manifest] '{}' is version {}, written by a newer ingot; this one "
              "reads version {}: update ingot, or re-export the directory with this one",
              source, version, kManifestVersion);
  INGOT_CHECK(version == kManifestVersion, IoError,
              "[generation manifest] '{}' is version {}, from an older ingot that did not record "
              "its components' input roles; this one reads version {}: re-export the directory "
              "(ingot export MODEL --task generation -o DIR)",
              source, version, kManifestVersion);
  GenerationManifest m;
  m.version = int(version);
  m.export_format = f.text("export_format");
  m.architecture = f.has("architecture") ? f.text("architecture") : "";
  m.max_cache_len = f.integer("max_cache_len");
  m.multi_token_decode = f.boolean_or("multi_token_decode", false);
  m.dynamic_cache_len = f.boolean_or("dynamic_cache_len", false);
  m.batch = f.integer_or("batch", 1);
  const Fields components = f.object("components");
  const Fields inputs = f.object("inputs");
  for (const auto& [name, file] : components.value().items()) {
    INGOT_CHECK(file.is_string() && !file.get<std::string>().empty() &&
                    fs::path(file.get<std::string>()).filename() == file.get<std::string>(),
                IoError,
                "[generation manifest] '{}': components.{} must be a file name in the "
                "directory",
                source, name);
    INGOT_CHECK(inputs.has(name.c_str()), IoError,
                "[generation manifest] '{}': inputs.{} is missing (every component lists its "
                "inputs)",
                source, name);
    m.components[name] = {file.get<std::string>(),
                          layout_from(inputs.at(name.c_str()), source, name)};
  }
  INGOT_CHECK(!m.components.empty(), IoError, "[generation manifest] '{}' lists no components",
              source);
  if (f.has("pipeline")) {
    const Fields p = f.object("pipeline");
    const std::string kind = p.text("kind");
    if (kind == "vision-language")
      m.vision_language = vision_language_from(p);
    else if (kind == "encoder-decoder")
      m.encoder_decoder = encoder_decoder_from(p);
    else
      INGOT_THROW(IoError,
                  "[generation manifest] '{}': pipeline.kind '{}' is neither 'vision-language' "
                  "nor 'encoder-decoder'",
                  source, kind);
  }
  return m;
}

GenerationManifest GenerationManifest::read(const std::string& dir) {
  const fs::path path = fs::path(dir) / kManifestFile;
  std::ifstream f(path);
  INGOT_CHECK(f.good(), IoError,
              "[generation manifest] no {} in '{}' (write one with ingot export MODEL --task "
              "generation -o DIR)",
              kManifestFile, dir);
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[generation manifest] '{}' is not valid JSON: {}", path.string(),
                e.what());
  }
  return from_json(j, path.string());
}

void GenerationManifest::write(const std::string& dir) const {
  const fs::path path = fs::path(dir) / kManifestFile;
  std::ofstream f(path);
  INGOT_CHECK(f.good(), IoError, "[generation manifest] cannot write '{}'", path.string());
  f << to_json().dump(2);
  INGOT_CHECK(f.good(), IoError, "[generation manifest] writing '{}' failed", path.string());
}

bool is_generation_directory(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / kManifestFile, ec);
}

}  // namespace ingot::generation
