#include "ingot/models/config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/core/error.h"

namespace ingot::models {

using nlohmann::json;

ConfigReader::ConfigReader(std::unique_ptr<json> j, std::string origin)
    : json_(std::move(j)), origin_(std::move(origin)) {}
ConfigReader::~ConfigReader() = default;
ConfigReader::ConfigReader(ConfigReader&&) noexcept = default;

ConfigReader ConfigReader::from_json_text(const std::string& text, const std::string& origin) {
  auto j = std::make_unique<json>();
  try {
    *j = json::parse(text);
  } catch (const json::exception& e) {
    INGOT_THROW(IoError, "[config] '{}' is not valid JSON: {}", origin, e.what());
  }
  INGOT_CHECK(j->is_object(), IoError, "[config] '{}' is not a JSON object", origin);
  return ConfigReader(std::move(j), origin);
}

ConfigReader ConfigReader::from_file(const std::string& path) {
  std::ifstream f(path);
  INGOT_CHECK(f.good(), IoError, "[config] cannot read '{}': is this a Hugging Face model folder?",
              path);
  std::stringstream ss;
  ss << f.rdbuf();
  return from_json_text(ss.str(), path);
}

const json* ConfigReader::find(const std::string& key) const {
  auto it = json_->find(key);
  if (it == json_->end() || it->is_null()) return nullptr;
  return &*it;
}

bool ConfigReader::has(const std::string& key) const { return find(key) != nullptr; }

void ConfigReader::fail(const std::string& key, const char* expected) const {
  const json* v = find(key);
  if (!v) INGOT_THROW(IoError, "[config] '{}': key '{}' is missing ({})", origin_, key, expected);
  INGOT_THROW(IoError, "[config] '{}': key '{}' should be {}, got {}", origin_, key, expected,
              v->dump());
}

int64_t ConfigReader::get_int(const std::string& key) const {
  const json* v = find(key);
  if (!v || !v->is_number_integer()) fail(key, "an integer");
  return v->get<int64_t>();
}
int64_t ConfigReader::get_int(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
std::optional<int64_t> ConfigReader::get_optional_int(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return get_int(key);
}
double ConfigReader::get_double(const std::string& key) const {
  const json* v = find(key);
  if (!v || !v->is_number()) fail(key, "a number");
  return v->get<double>();
}
double ConfigReader::get_double(const std::string& key, double fallback) const {
  return has(key) ? get_double(key) : fallback;
}
bool ConfigReader::get_bool(const std::string& key, bool fallback) const {
  const json* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, "true or false");
  return v->get<bool>();
}
std::string ConfigReader::get_string(const std::string& key) const {
  const json* v = find(key);
  if (!v || !v->is_string()) fail(key, "a string");
  return v->get<std::string>();
}
std::string ConfigReader::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

std::string ConfigReader::architecture() const {
  const json* v = find("architectures");
  if (!v || !v->is_array() || v->empty() || !(*v)[0].is_string()) {
    fail("architectures", "a list naming the model class, e.g. [\"LlamaForCausalLM\"]");
  }
  return (*v)[0].get<std::string>();
}

RopeConfig ConfigReader::rope() const {
  RopeConfig r;
  r.theta = get_double("rope_theta", r.theta);
  r.partial_rotary_factor = get_double("partial_rotary_factor", 1.0);
  // transformers 5 writes `rope_parameters`; older checkpoints `rope_scaling`.
  const json* params = find("rope_parameters");
  if (!params) params = find("rope_scaling");
  if (!params) return r;
  INGOT_CHECK(params->is_object(), IoError, "[config] '{}': rope parameters should be an object, got {}",
              origin_, params->dump());
  const json& p = *params;
  auto num = [&](const char* k, double fallback) {
    if (!p.contains(k) || p[k].is_null()) return fallback;
    INGOT_CHECK(p[k].is_number(), IoError, "[config] '{}': rope parameter '{}' should be a number, got {}",
                origin_, k, p[k].dump());
    return p[k].get<double>();
  };
  std::string type = "default";
  for (const char* key : {"rope_type", "type"}) {
    if (p.contains(key) && p[key].is_string()) {
      type = p[key].get<std::string>();
      break;
    }
  }
  r.type = type;
  r.theta = num("rope_theta", r.theta);
  r.factor = num("factor", 1.0);
  r.partial_rotary_factor = num("partial_rotary_factor", r.partial_rotary_factor);
  r.low_freq_factor = num("low_freq_factor", r.low_freq_factor);
  r.high_freq_factor = num("high_freq_factor", r.high_freq_factor);
  if (p.contains("original_max_position_embeddings") && p["original_max_position_embeddings"].is_number()) {
    r.original_max_position_embeddings = p["original_max_position_embeddings"].get<int64_t>();
  }
  r.beta_fast = num("beta_fast", r.beta_fast);
  r.beta_slow = num("beta_slow", r.beta_slow);
  if (p.contains("attention_factor") && p["attention_factor"].is_number()) r.attention_factor = p["attention_factor"].get<double>();
  if (p.contains("mscale") && p["mscale"].is_number()) r.mscale = p["mscale"].get<double>();
  if (p.contains("mscale_all_dim") && p["mscale_all_dim"].is_number()) r.mscale_all_dim = p["mscale_all_dim"].get<double>();
  if (p.contains("truncate") && p["truncate"].is_boolean()) r.truncate = p["truncate"].get<bool>();
  const bool known = type == "default" || type == "linear" || type == "dynamic" ||
                     type == "llama3" || type == "yarn";
  INGOT_CHECK(known, NotSupportedError,
              "[config] '{}': rope type '{}' is not supported (supported: default, linear, "
              "dynamic, llama3, yarn)", origin_, type);
  return r;
}

}  // namespace ingot::models
