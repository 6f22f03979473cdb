#include "ingot/exporters/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "ingot/core/error.h"
#include "ingot/exporters/onnx/version.h"

namespace ingot::exporters {

namespace {

using json = nlohmann::ordered_json;

json native_fields(const NativeExportConfig& c) {
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
  return j;
}

// Reads `key` of `j` into `out` when present, checking its JSON type.
template <typename T>
void read(const json& j, const char* key, T& out, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    INGOT_THROW(ValueError, "[AutoExportConfig] {}: '{}' has the wrong type ({})", origin, key,
                it->dump());
  }
}

void read_native(const json& j, NativeExportConfig& c, const std::string& origin) {
  read(j, "dynamic", c.dynamic, origin);
  read(j, "max_batch", c.max_batch, origin);
  read(j, "max_seq", c.max_seq, origin);
  read(j, "prefer_deferred_runtime_asserts_over_guards",
       c.prefer_deferred_runtime_asserts_over_guards, origin);
  read(j, "example_batch", c.example_batch, origin);
  read(j, "example_seq", c.example_seq, origin);
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
      "example_batch", "example_seq"};
  return keys;
}

const std::vector<std::string>& onnx_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = native_keys();
    for (const char* extra :
         {"opset", "external_data", "external_threshold", "optimize", "output_path"}) {
      k.push_back(extra);
    }
    return k;
  }();
  return keys;
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
  return native_fields(*this).dump(2);
}

std::string OnnxConfig::to_json() const {
  json j = native_fields(*this);
  j["opset"] = opset;
  j["external_data"] = external_data;
  j["external_threshold"] = external_threshold;
  j["optimize"] = optimize;
  j["output_path"] = output_path;
  return j.dump(2);
}

std::vector<std::string> AutoExportConfig::known_formats() {
  return {"native", "onnx"};
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
  if (format == "onnx") {
    check_keys(j, onnx_keys(), format, origin);
    auto c = std::make_unique<OnnxConfig>();
    read_native(j, *c, origin);
    read(j, "opset", c->opset, origin);
    read(j, "external_data", c->external_data, origin);
    read(j, "external_threshold", c->external_threshold, origin);
    read(j, "optimize", c->optimize, origin);
    read(j, "output_path", c->output_path, origin);
    onnx::ir_version_for_opset(c->opset);  // range check with the supported opsets
    INGOT_CHECK(
        c->external_data == "auto" || c->external_data == "always" || c->external_data == "never",
        ValueError,
        "[AutoExportConfig] {}: external_data is \"auto\", \"always\" or \"never\", got \"{}\"",
        origin, c->external_data);
    INGOT_CHECK(c->external_threshold >= 0, ValueError,
                "[AutoExportConfig] {}: external_threshold must be >= 0", origin);
    return c;
  }
  INGOT_THROW(ValueError, "[AutoExportConfig] {}: unknown export_format '{}' (known formats: {})",
              origin, format, fmt::join(known_formats(), ", "));
}

}  // namespace ingot::exporters
