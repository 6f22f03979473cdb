#include "ingot/media/auto_processor.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::map<std::string, AutoProcessor::Factory>& registry() {
  static std::map<std::string, AutoProcessor::Factory> r;
  return r;
}

// FILE's JSON object, or null when the file does not exist.
json read_json(const fs::path& p) {
  if (!fs::exists(p)) return nullptr;
  std::ifstream f(p);
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[AutoProcessor] '{}' is not valid JSON: {}", p.string(), e.what());
  }
}

std::string string_at(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

ProcessedImages Processor::images(const std::vector<std::string>&, const std::string&) const {
  INGOT_THROW(NotSupportedError, "[AutoProcessor] {} takes no images", type());
}

Tensor Processor::audio(const std::string&) const {
  INGOT_THROW(NotSupportedError, "[AutoProcessor] {} takes no audio", type());
}

bool AutoProcessor::has_config(const std::string& folder) {
  return fs::exists(fs::path(folder) / "preprocessor_config.json") ||
         fs::exists(fs::path(folder) / "processor_config.json");
}

std::unique_ptr<Processor> AutoProcessor::from_folder(const std::string& folder) {
  INGOT_CHECK(has_config(folder), IoError,
              "[AutoProcessor] '{}' has no preprocessor_config.json or processor_config.json "
              "(the processor's settings); pass preprocessed inputs with --input NAME=FILE.npy "
              "(pixel_values, input_features)",
              folder);
  const fs::path pre = fs::path(folder) / "preprocessor_config.json";
  const fs::path proc = fs::path(folder) / "processor_config.json";
  const json pre_json = read_json(pre), proc_json = read_json(proc);
  std::string type;
  for (const char* key : {"image_processor_type", "feature_extractor_type", "processor_class"})
    if (type.empty()) type = string_at(pre_json, key);
  const fs::path& origin = type.empty() && proc_json.is_object() ? proc : pre;
  if (type.empty()) type = string_at(proc_json, "processor_class");
  if (type.empty() && proc_json.is_object() && proc_json.contains("image_processor"))
    type = string_at(proc_json["image_processor"], "image_processor_type");
  INGOT_CHECK(!type.empty(), NotSupportedError,
              "[AutoProcessor] '{}' names no processor type (image_processor_type, "
              "feature_extractor_type or processor_class; registered: {})",
              folder, fmt::join(registered(), ", "));
  const auto it = registry().find(type);
  INGOT_CHECK(it != registry().end(), NotSupportedError,
              "[AutoProcessor] '{}' names processor type '{}', which ingot does not implement "
              "(registered: {}); pass preprocessed inputs with --input NAME=FILE.npy",
              origin.string(), type, fmt::join(registered(), ", "));
  return it->second(folder);
}

std::vector<std::string> AutoProcessor::registered() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : registry()) names.push_back(name);
  return names;
}

bool AutoProcessor::add(const std::vector<std::string>& types, Factory factory) {
  for (const std::string& type : types) {
    INGOT_CHECK(registry().emplace(type, factory).second, InternalError,
                "[AutoProcessor] processor type '{}' is registered twice", type);
  }
  return true;
}

}  // namespace ingot::media
