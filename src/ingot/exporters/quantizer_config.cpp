#include "ingot/exporters/quantizer_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "ingot/core/error.h"

namespace ingot::exporters {

using json = nlohmann::ordered_json;

void QuantizerConfig::validate(const std::string& origin) const {
  INGOT_CHECK(scheme.empty() || scheme == "int8" || scheme == "int4", ValueError,
              "[quantizer] {}: scheme is \"int8\" or \"int4\" (or empty for none), got \"{}\"",
              origin, scheme);
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
  for (const std::string& p : exclude) {
    try {
      std::regex re(p, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      INGOT_THROW(ValueError,
                  "[quantizer] {}: exclude pattern '{}' is not a valid regular expression ({})",
                  origin, p, e.what());
    }
  }
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
}

QuantizerConfig quantizer_from_json(const json& j, const std::string& origin) {
  QuantizerConfig q;
  if (j.is_null()) return q;
  if (j.is_string()) {
    q.scheme = j.get<std::string>();
    q.validate(origin);
    return q;
  }
  INGOT_CHECK(j.is_object(), ValueError,
              "[AutoExportConfig] {}: 'quantizer' is null, \"int8\", \"int4\" or an object, got {}",
              origin, j.dump());
  static const std::set<std::string> keys = {"scheme",  "group_size",         "zero_point",
                                             "lm_head", "keep_lm_head_float", "exclude"};
  for (const auto& [key, value] : j.items()) {
    INGOT_CHECK(keys.contains(key), ValueError,
                "[AutoExportConfig] {}: unknown key 'quantizer.{}' (known: scheme, group_size, "
                "zero_point, lm_head, keep_lm_head_float, exclude)",
                origin, key);
  }
  try {
    if (j.contains("scheme")) q.scheme = j["scheme"].get<std::string>();
    if (j.contains("group_size")) q.group_size = j["group_size"].get<int64_t>();
    if (j.contains("zero_point")) q.zero_point = j["zero_point"].get<bool>();
    if (j.contains("lm_head")) q.lm_head = j["lm_head"].get<bool>();
    if (j.contains("keep_lm_head_float"))
      q.keep_lm_head_float = j["keep_lm_head_float"].get<bool>();
    if (j.contains("exclude")) q.exclude = j["exclude"].get<std::vector<std::string>>();
  } catch (const json::exception&) {
    INGOT_THROW(ValueError, "[AutoExportConfig] {}: 'quantizer' has a field of the wrong type ({})",
                origin, j.dump());
  }
  INGOT_CHECK(q.enabled(), ValueError,
              "[AutoExportConfig] {}: 'quantizer' needs a \"scheme\" (\"int8\" or \"int4\")",
              origin);
  q.validate(origin);
  return q;
}

}  // namespace ingot::exporters
