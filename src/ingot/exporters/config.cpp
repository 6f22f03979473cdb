#include "ingot/exporters/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ingot/core/error.h"
#include "ingot/exporters/config_json.h"

namespace ingot::exporters {

using json = nlohmann::ordered_json;

json native_config_json(const NativeExportConfig& c) {
  json j;
  j["export_format"] = c.export_format();
  j["dynamic"] = c.dynamic;
  j["max_batch"] = c.max_batch;
  j["max_seq"] = c.max_seq;
  j["dynamic_shapes"] =
      c.dynamic_shapes_json.empty() ? json(nullptr) : json::parse(c.dynamic_shapes_json);
  j["prefer_deferred_runtime_asserts_over_guards"] = c.prefer_deferred_runtime_asserts_over_guards;
  j["example_batch"] = c.example_batch;
  j["example_seq"] = c.example_seq;
  quantizer_to_json(c.quantizer, j["quantizer"]);
  return j;
}

namespace {

void read_native(const json& j, NativeExportConfig& c, const std::string& origin) {
  read_config_key(j, "dynamic", c.dynamic, origin);
  read_config_key(j, "max_batch", c.max_batch, origin);
  read_config_key(j, "max_seq", c.max_seq, origin);
  read_config_key(j, "prefer_deferred_runtime_asserts_over_guards",
                  c.prefer_deferred_runtime_asserts_over_guards, origin);
  read_config_key(j, "example_batch", c.example_batch, origin);
  read_config_key(j, "example_seq", c.example_seq, origin);
  if (auto it = j.find("quantizer"); it != j.end()) c.quantizer = quantizer_from_json(*it, origin);
  if (auto it = j.find("dynamic_shapes"); it != j.end() && !it->is_null()) {
    INGOT_CHECK(it->is_object(), ValueError,
                "[AutoExportConfig] {}: 'dynamic_shapes' must be an object by input name, got {}",
                origin, it->dump());
    c.dynamic_shapes_json = it->dump();
    (void)c.dynamic_shapes();  // validates the spec now, naming the origin
  }
  INGOT_CHECK(
      c.max_batch >= 1 && c.max_seq >= 1 && c.example_batch >= 1 && c.example_seq >= 1, ValueError,
      "[AutoExportConfig] {}: max_batch, max_seq, example_batch and example_seq must be >= 1",
      origin);
  INGOT_CHECK(
      !(c.dynamic && !c.dynamic_shapes_json.empty()), ValueError,
      "[AutoExportConfig] {}: give either \"dynamic\": true or \"dynamic_shapes\", not both",
      origin);
}

const std::vector<std::string>& native_keys() {
  static const std::vector<std::string> keys = {
      "export_format", "dynamic",        "max_batch",
      "max_seq",       "dynamic_shapes", "prefer_deferred_runtime_asserts_over_guards",
      "example_batch", "example_seq", "quantizer"};
  return keys;
}

std::map<std::string, ConfigFormat>& formats() {
  static std::map<std::string, ConfigFormat> f;
  return f;
}

void check_keys(const json& j, const std::vector<std::string>& known, const std::string& format,
                const std::string& origin) {
  const std::set<std::string> allowed(known.begin(), known.end());
  for (const auto& [key, value] : j.items()) {
    INGOT_CHECK(allowed.contains(key), ValueError,
                "[AutoExportConfig] {}: unknown key '{}' for export_format '{}' (known keys: {})",
                origin, key, format, fmt::join(known, ", "));
  }
}

}  // namespace

std::optional<DynamicShapes> NativeExportConfig::dynamic_shapes() const {
  if (dynamic_shapes_json.empty()) return std::nullopt;
  return DynamicShapes::from_json(dynamic_shapes_json, "dynamic_shapes");
}

std::string NativeExportConfig::to_json() const {
  return native_config_json(*this).dump(2);
}

void register_config_format(const std::string& format, ConfigFormat f) {
  INGOT_CHECK(format != "native" && !formats().contains(format), InternalError,
              "[AutoExportConfig] export_format '{}' is registered twice", format);
  formats().emplace(format, std::move(f));
}

std::vector<std::string> AutoExportConfig::known_formats() {
  std::vector<std::string> out = {"native"};
  for (const auto& [name, f] : formats()) out.push_back(name);
  return out;
}

std::unique_ptr<NativeExportConfig> AutoExportConfig::from_json(const std::string& text,
                                                                const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    INGOT_THROW(ValueError, "[AutoExportConfig] {}: not valid JSON: {}", origin, e.what());
  }
  INGOT_CHECK(j.is_object(), ValueError, "[AutoExportConfig] {}: expected a JSON object, got {}",
              origin, j.dump());
  INGOT_CHECK(j.contains("export_format") && j["export_format"].is_string(), ValueError,
              "[AutoExportConfig] {}: needs \"export_format\" (one of: {})", origin,
              fmt::join(known_formats(), ", "));
  const std::string format = j["export_format"].get<std::string>();
  if (format == "native") {
    check_keys(j, native_keys(), format, origin);
    auto c = std::make_unique<NativeExportConfig>();
    read_native(j, *c, origin);
    return c;
  }
  if (auto it = formats().find(format); it != formats().end()) {
    std::vector<std::string> keys = native_keys();
    keys.insert(keys.end(), it->second.extra_keys.begin(), it->second.extra_keys.end());
    check_keys(j, keys, format, origin);
    std::unique_ptr<NativeExportConfig> c = it->second.make();
    read_native(j, *c, origin);
    it->second.read_extra(j, *c, origin);
    return c;
  }
  INGOT_THROW(ValueError, "[AutoExportConfig] {}: unknown export_format '{}' (known formats: {})",
              origin, format, fmt::join(known_formats(), ", "));
}

}  // namespace ingot::exporters
