#include "ingot/exporters/quantizer_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <regex>
#include <set>

#include "ingot/core/error.h"
#include "ingot/exporters/quantizer.h"

namespace ingot::exporters {

using json = nlohmann::ordered_json;

const std::vector<std::string>& gguf_file_type_schemes() {
  static const std::vector<std::string> names = {"q4_k_m", "q4_k_s", "q6_k", "q8_0"};
  return names;
}

bool QuantizerConfig::gguf_file_type() const {
  const auto& n = gguf_file_type_schemes();
  return std::find(n.begin(), n.end(), scheme) != n.end();
}

void QuantizerConfig::validate(const std::string& origin) const {
  INGOT_CHECK(scheme.empty() || scheme == "int8" || scheme == "int4" || gguf_file_type(),
              ValueError,
              "[quantizer] {}: scheme is \"int8\" or \"int4\", a llama.cpp GGUF file type ({}), "
              "or empty for none; got \"{}\"",
              origin, fmt::join(gguf_file_type_schemes(), ", "), scheme);
  if (gguf_file_type()) {
    // llama.cpp's file types fix every choice but the calibration that gives importance.
    const QuantizerConfig d;
    std::vector<std::string> set;
    if (group_size != d.group_size) set.push_back("group_size");
    if (zero_point) set.push_back("zero_point");
    if (lm_head) set.push_back("lm_head");
    if (keep_lm_head_float) set.push_back("keep_lm_head_float");
    if (!exclude.empty()) set.push_back("exclude");
    if (method != d.method) set.push_back("method");
    if (!rules.empty()) set.push_back("rules");
    if (!preset.empty()) set.push_back("preset");
    if (ratio != 1.0) set.push_back("ratio");
    if (act_order) set.push_back("act_order");
    if (damp != d.damp) set.push_back("damp");
    INGOT_CHECK(set.empty(), ValueError,
                "[quantizer] {}: scheme '{}' is a llama.cpp GGUF file type whose per-tensor types "
                "and k-quant search are fixed; it takes dataset, num_samples and seq_len only, "
                "not {}",
                origin, scheme, fmt::join(set, ", "));
  }
  INGOT_CHECK(scheme != "int4" || group_size == 32 || group_size == 64 || group_size == 128,
              ValueError, "[quantizer] {}: int4 group_size is 32, 64 or 128, got {}", origin,
              group_size);
  INGOT_CHECK(!(scheme == "int8" && zero_point), ValueError,
              "[quantizer] {}: int8 is symmetric per output channel; zero_point applies to int4",
              origin);
  INGOT_CHECK(!(lm_head && keep_lm_head_float), ValueError,
              "[quantizer] {}: lm_head (quantise it with the scheme) and keep_lm_head_float "
              "(keep it float) contradict each other; set one",
              origin);
  auto check_pattern = [&](const std::string& p, const char* what) {
    try {
      std::regex re(p, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      INGOT_THROW(ValueError, "[quantizer] {}: {} pattern '{}' is not a valid regular expression ({})",
                  origin, what, p, e.what());
    }
  };
  for (const std::string& p : exclude) check_pattern(p, "exclude");
  for (const BitsRule& r : rules) {
    check_pattern(r.pattern, "rules");
    INGOT_CHECK(r.bits == 4 || r.bits == 8, ValueError,
                "[quantizer] {}: rule '{}' asks for {} bits; rules take 4 or 8", origin, r.pattern,
                r.bits);
  }
  INGOT_CHECK(preset.empty() || preset == "q4_k_m", ValueError,
              "[quantizer] {}: unknown preset '{}' (known: q4_k_m)", origin, preset);
  INGOT_CHECK(ratio > 0.0 && ratio <= 1.0, ValueError,
              "[quantizer] {}: ratio is the fraction of parameters kept in int4, in (0, 1]; got {}",
              origin, ratio);
  INGOT_CHECK(ratio == 1.0 || scheme == "int4", ValueError,
              "[quantizer] {}: ratio applies to the int4 scheme (got scheme '{}')", origin, scheme);
  const std::vector<std::string> methods = registered_quantizers();
  INGOT_CHECK(std::find(methods.begin(), methods.end(), method) != methods.end(), ValueError,
              "[quantizer] {}: unknown method '{}' (registered: {})", origin, method,
              fmt::join(methods, ", "));
  INGOT_CHECK(num_samples >= 1 && seq_len >= 1, ValueError,
              "[quantizer] {}: num_samples and seq_len must be >= 1 (got {} and {})", origin,
              num_samples, seq_len);
  INGOT_CHECK(damp > 0.0 && damp <= 1.0, ValueError,
              "[quantizer] {}: damp is a fraction of the mean Hessian diagonal in (0, 1], got {}",
              origin, damp);
}

void quantizer_to_json(const QuantizerConfig& q, json& out) {
  if (!q.enabled()) {
    out = nullptr;
    return;
  }
  out = json::object();
  out["scheme"] = q.scheme;
  out["group_size"] = q.group_size;
  out["zero_point"] = q.zero_point;
  out["lm_head"] = q.lm_head;
  out["keep_lm_head_float"] = q.keep_lm_head_float;
  out["exclude"] = q.exclude;
  out["method"] = q.method;
  if (!q.dataset.empty()) {
    out["dataset"] = q.dataset;
    out["num_samples"] = q.num_samples;
    out["seq_len"] = q.seq_len;
  }
  if (!q.rules.empty()) {
    json rules = json::array();
    for (const BitsRule& r : q.rules) rules.push_back({{"pattern", r.pattern}, {"bits", r.bits}});
    out["rules"] = std::move(rules);
  }
  if (!q.preset.empty()) out["preset"] = q.preset;
  if (q.ratio != 1.0) out["ratio"] = q.ratio;
  if (q.method == "gptq") {
    out["act_order"] = q.act_order;
    out["damp"] = q.damp;
  }
}

QuantizerConfig quantizer_from_json(const json& j, const std::string& origin) {
  QuantizerConfig q;
  if (j.is_null()) return q;
  if (j.is_string()) {
    q.scheme = j.get<std::string>();
    q.validate(origin);
    return q;
  }
  INGOT_CHECK(
      j.is_object(), ValueError,
      "[AutoExportConfig] {}: 'quantizer' is null, a scheme (\"int8\", \"int4\", \"q4_k_m\", ...) "
      "or an object, got {}",
      origin, j.dump());
  static const std::set<std::string> keys = {
      "scheme", "group_size", "zero_point", "lm_head", "keep_lm_head_float", "exclude", "method",
      "dataset", "num_samples", "seq_len", "rules", "preset", "ratio", "act_order", "damp"};
  for (const auto& [key, value] : j.items()) {
    INGOT_CHECK(keys.contains(key), ValueError,
                "[AutoExportConfig] {}: unknown key 'quantizer.{}' (known: {})", origin, key,
                fmt::join(keys, ", "));
  }
  try {
    if (j.contains("scheme")) q.scheme = j["scheme"].get<std::string>();
    if (j.contains("group_size")) q.group_size = j["group_size"].get<int64_t>();
    if (j.contains("zero_point")) q.zero_point = j["zero_point"].get<bool>();
    if (j.contains("lm_head")) q.lm_head = j["lm_head"].get<bool>();
    if (j.contains("keep_lm_head_float"))
      q.keep_lm_head_float = j["keep_lm_head_float"].get<bool>();
    if (j.contains("exclude")) q.exclude = j["exclude"].get<std::vector<std::string>>();
    if (j.contains("method")) q.method = j["method"].get<std::string>();
    if (j.contains("dataset")) q.dataset = j["dataset"].get<std::string>();
    if (j.contains("num_samples")) q.num_samples = j["num_samples"].get<int64_t>();
    if (j.contains("seq_len")) q.seq_len = j["seq_len"].get<int64_t>();
    if (j.contains("rules")) {
      for (const json& r : j["rules"])
        q.rules.push_back({r.at("pattern").get<std::string>(), r.at("bits").get<int>()});
    }
    if (j.contains("preset")) q.preset = j["preset"].get<std::string>();
    if (j.contains("ratio")) q.ratio = j["ratio"].get<double>();
    if (j.contains("act_order")) q.act_order = j["act_order"].get<bool>();
    if (j.contains("damp")) q.damp = j["damp"].get<double>();
  } catch (const json::exception&) {
    INGOT_THROW(ValueError, "[AutoExportConfig] {}: 'quantizer' has a field of the wrong type ({})",
                origin, j.dump());
  }
  INGOT_CHECK(q.enabled(), ValueError,
              "[AutoExportConfig] {}: 'quantizer' needs a \"scheme\" (\"int8\", \"int4\" or a GGUF "
              "file type such as \"q4_k_m\")",
              origin);
  q.validate(origin);
  return q;
}

}  // namespace ingot::exporters
