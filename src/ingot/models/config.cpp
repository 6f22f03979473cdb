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

ConfigReader ConfigReader::child(const std::string& key) const {
  const json* j = find(key);
  INGOT_CHECK(j && j->is_object(), IoError, "[config] '{}': \"{}\" must be a JSON object", origin_,
              key);
  return ConfigReader(std::make_unique<json>(*j), origin_ + ":" + key);
}

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

std::vector<std::string> ConfigReader::get_string_list(const std::string& key) const {
  const json* v = find(key);
  std::vector<std::string> out;
  if (!v) return out;
  if (!v->is_array()) fail(key, "a list of strings");
  for (const auto& e : *v) {
    if (!e.is_string()) fail(key, "a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<int64_t> ConfigReader::get_int_list(const std::string& key) const {
  const json* v = find(key);
  std::vector<int64_t> out;
  if (!v) return out;
  if (!v->is_array()) fail(key, "a list of integers");
  for (const auto& e : *v) {
    if (!e.is_number_integer()) fail(key, "a list of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::string ConfigReader::architecture() const {
  const json* v = find("architectures");
  if (!v || !v->is_array() || v->empty() || !(*v)[0].is_string()) {
    fail("architectures", "a list naming the model class, e.g. [\"LlamaForCausalLM\"]");
  }
  return (*v)[0].get<std::string>();
}

RopeConfig ConfigReader::rope(const std::string& layer_type) const {
  RopeConfig r;
  r.theta = get_double("rope_theta", r.theta);
  if (layer_type == "sliding_attention") r.theta = get_double("rope_local_base_freq", r.theta);
  r.partial_rotary_factor = get_double("partial_rotary_factor", 1.0);
  // transformers 5 writes `rope_parameters`; older checkpoints `rope_scaling`.
  const json* params = find("rope_parameters");
  if (!params) params = find("rope_scaling");
  if (params && params->is_object()) {  // per layer type (Gemma 3)
    const std::string key = layer_type.empty() ? "full_attention" : layer_type;
    auto it = params->find(key);
    if (it != params->end() && it->is_object()) {
      params = &*it;
    } else if (layer_type == "sliding_attention") {
      return r;  // older Gemma 3 configs: rope_scaling is the global layers' only
    }
  }
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
  if (p.contains("factor") && p["factor"].is_number()) r.factor_given = r.factor;
  r.partial_rotary_factor = num("partial_rotary_factor", r.partial_rotary_factor);
  r.low_freq_factor = num("low_freq_factor", r.low_freq_factor);
  r.high_freq_factor = num("high_freq_factor", r.high_freq_factor);
  if (p.contains("original_max_position_embeddings") && p["original_max_position_embeddings"].is_number()) {
    r.original_max_position_embeddings = p["original_max_position_embeddings"].get<int64_t>();
  } else if (has("original_max_position_embeddings")) {  // Phi-3 keeps it at the top level
    r.original_max_position_embeddings = get_int("original_max_position_embeddings");
  }
  if (type == "su") type = r.type = "longrope";  // the older name transformers maps
  auto factors = [&](const char* k) {
    std::vector<double> f;
    if (!p.contains(k)) return f;
    INGOT_CHECK(p[k].is_array(), IoError, "[config] '{}': rope parameter '{}' should be a list of "
                "numbers, got {}", origin_, k, p[k].dump());
    for (const auto& v : p[k]) {
      INGOT_CHECK(v.is_number(), IoError, "[config] '{}': rope parameter '{}' should be a list of "
                  "numbers, got {}", origin_, k, p[k].dump());
      f.push_back(v.get<double>());
    }
    return f;
  };
  r.short_factor = factors("short_factor");
  r.long_factor = factors("long_factor");
  r.beta_fast = num("beta_fast", r.beta_fast);
  r.beta_slow = num("beta_slow", r.beta_slow);
  if (p.contains("attention_factor") && p["attention_factor"].is_number()) r.attention_factor = p["attention_factor"].get<double>();
  if (p.contains("mscale") && p["mscale"].is_number()) r.mscale = p["mscale"].get<double>();
  if (p.contains("mscale_all_dim") && p["mscale_all_dim"].is_number()) r.mscale_all_dim = p["mscale_all_dim"].get<double>();
  if (p.contains("truncate") && p["truncate"].is_boolean()) r.truncate = p["truncate"].get<bool>();
  const bool known = type == "default" || type == "linear" || type == "dynamic" ||
                     type == "llama3" || type == "yarn" || type == "longrope";
  INGOT_CHECK(known, NotSupportedError,
              "[config] '{}': rope type '{}' is not supported (supported: default, linear, "
              "dynamic, llama3, yarn, longrope)", origin_, type);
  INGOT_CHECK(type != "longrope" || (!r.short_factor.empty() && !r.long_factor.empty() &&
                                     r.original_max_position_embeddings),
              IoError, "[config] '{}': longrope needs short_factor, long_factor and "
              "original_max_position_embeddings", origin_);
  return r;
}

}  // namespace ingot::models
