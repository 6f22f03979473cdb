// Reading generation_config.json (and the generation keys of config.json).
#include "ingot/models/generation_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer.h"

namespace ingot::models {
namespace {

using nlohmann::json;

json parse_object(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[generation_config] '{}' is not valid JSON: {}", origin, e.what());
  }
  INGOT_CHECK(j.is_object(), IoError, "[generation_config] '{}' should be a JSON object, got {}",
              origin, j.type_name());
  return j;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INGOT_CHECK(f.good(), IoError, "[generation_config] cannot read '{}'", path);
  std::stringstream ss;
  ss << f.rdbuf();
  INGOT_CHECK(!f.bad(), IoError, "[generation_config] error while reading '{}'", path);
  return ss.str();
}

// The typed keys of one JSON object; `where` names it in errors ("'x/config.json'", or
// with its sub-object: "'x/config.json' (text_config)").
class Keys {
 public:
  Keys(const json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const json* find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<int64_t> integer(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) wrong(key, "an integer", *v);
    return v->get<int64_t>();
  }
  std::optional<double> number(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong(key, "a number", *v);
    return v->get<double>();
  }
  std::optional<bool> boolean(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong(key, "true or false", *v);
    return v->get<bool>();
  }
  // An integer or a list of integers.
  std::optional<std::vector<int64_t>> ids(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_number_integer()) return std::vector<int64_t>{v->get<int64_t>()};
    if (!v->is_array()) wrong(key, "an integer or a list of integers", *v);
    std::vector<int64_t> out;
    for (const json& id : *v) {
      if (!id.is_number_integer()) wrong(key, "an integer or a list of integers", *v);
      out.push_back(id.get<int64_t>());
    }
    return out;
  }

 private:
  [[noreturn]] void wrong(const char* key, const char* expected, const json& v) const {
    std::string shown = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    INGOT_THROW(ValueError, "[generation_config] {}: key '{}' should be {}, got {}", where_, key,
                expected, shown);
  }

  const json& object_;
  std::string where_;
};

// Sets every field of `c` that is unset and that `keys` has.
void fill_unset(GenerationConfig& c, const Keys& keys) {
  auto fill = [](auto& field, auto value) {
    if (!field) field = value;
  };
  fill(c.eos_token_ids, keys.ids("eos_token_id"));
  fill(c.bos_token_id, keys.integer("bos_token_id"));
  fill(c.pad_token_id, keys.integer("pad_token_id"));
  fill(c.decoder_start_token_id, keys.integer("decoder_start_token_id"));
  fill(c.do_sample, keys.boolean("do_sample"));
  fill(c.temperature, keys.number("temperature"));
  fill(c.top_k, keys.integer("top_k"));
  fill(c.top_p, keys.number("top_p"));
  fill(c.min_p, keys.number("min_p"));
  fill(c.repetition_penalty, keys.number("repetition_penalty"));
  fill(c.max_new_tokens, keys.integer("max_new_tokens"));
  fill(c.max_length, keys.integer("max_length"));
}

}  // namespace

GenerationConfig GenerationConfig::from_json_text(const std::string& text,
                                                  const std::string& origin) {
  const json j = parse_object(text, origin);
  GenerationConfig c;
  fill_unset(c, Keys(j, fmt::format("'{}'", origin)));
  return c;
}

GenerationConfig GenerationConfig::from_file(const std::string& path) {
  return from_json_text(read_text(path), path);
}

GenerationConfig GenerationConfig::from_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  const std::string generation = (fs::path(folder) / "generation_config.json").string();
  if (fs::exists(generation)) return from_file(generation);
  GenerationConfig c;
  const std::string model = (fs::path(folder) / "config.json").string();
  if (fs::exists(model)) c.fill_from_model_config(read_text(model), model);
  return c;
}

void GenerationConfig::fill_from_model_config(const std::string& model_config_text,
                                              const std::string& origin) {
  const json j = parse_object(model_config_text, origin);
  fill_unset(*this, Keys(j, fmt::format("'{}'", origin)));
  // Multimodal and encoder-decoder configs keep the language model's keys in a
  // sub-config: the first of these that is a non-empty object fills what is still unset.
  for (const char* sub : {"decoder", "generator", "text_config"}) {
    auto it = j.find(sub);
    if (it != j.end() && it->is_object() && !it->empty()) {
      fill_unset(*this, Keys(*it, fmt::format("'{}' ({})", origin, sub)));
      break;
    }
  }
}

std::optional<int64_t> GenerationConfig::new_token_limit(int64_t prompt_tokens) const {
  INGOT_CHECK(prompt_tokens >= 0, ValueError,
              "[generation_config] new_token_limit: the prompt length must be >= 0, got {}",
              prompt_tokens);
  if (max_new_tokens) return *max_new_tokens;
  if (max_length) return *max_length > prompt_tokens ? *max_length - prompt_tokens : 0;
  return std::nullopt;
}

std::vector<int64_t> conventional_stop_tokens(const text::Tokenizer& tokenizer) {
  std::vector<int64_t> ids;
  for (const char* eos : {"<|endoftext|>", "</s>", "<|im_end|>", "<|eot_id|>"}) {
    if (auto id = tokenizer.token_to_id(eos)) ids.push_back(*id);
  }
  return ids;
}

}  // namespace ingot::models
