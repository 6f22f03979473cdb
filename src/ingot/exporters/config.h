// Export configurations (transformers.exporters' DynamoConfig / OnnxConfig /
// AutoExportConfig, natively).
//
//   NativeExportConfig c;                 // the ExportedProgram itself (.ingot)
//   c.dynamic = true;                     // batch and seq dims of every input are dynamic
//   OnnxConfig o;                         // (onnx/onnx_config.h) adds opset, external data, ...
//   auto any = AutoExportConfig::from_json(R"({"export_format": "onnx", "dynamic": true})");
//   std::string back = any->to_json();    // the same settings, every field spelled out
//
// Every config knows its format ("native", "onnx"); AutoExporter (exporter.h) picks the
// exporter from it. JSON keys are the field names below; an unknown key or format is a
// ValueError that lists the known ones.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingot/export/export.h"
#include "ingot/exporters/quantizer_config.h"

namespace ingot::exporters {

// What every exporter's tracing stages read.
struct NativeExportConfig {
  NativeExportConfig() = default;
  virtual ~NativeExportConfig() = default;
  NativeExportConfig(const NativeExportConfig&) = default;
  NativeExportConfig& operator=(const NativeExportConfig&) = default;

  // "native", "onnx", ...: which exporter reads this config.
  virtual std::string export_format() const { return "native"; }
  virtual std::unique_ptr<NativeExportConfig> clone() const {
    return std::make_unique<NativeExportConfig>(*this);
  }
  // Every field, as JSON that from_json reads back to an equal config.
  virtual std::string to_json() const;

  // Dims 0 (batch) and 1 (seq) of every tensor input are dynamic: Dim("batch", 1,
  // max_batch) and Dim("seq", 1, max_seq). Guards the trace takes on them become range
  // narrowing (the fold_bound_asserts program fix), as Dim.AUTO infers ranges in torch.
  bool dynamic = false;
  int64_t max_batch = 1024;
  int64_t max_seq = 4096;
  // Explicit per-input spec in DynamicShapes::from_json's form (replaces `dynamic`):
  // {"input_ids": {"0": "batch", "1": {"name": "seq", "min": 1, "max": 64}}}.
  std::string dynamic_shapes_json;
  // Guards the spec does not imply become runtime asserts instead of export errors.
  bool prefer_deferred_runtime_asserts_over_guards = false;
  // Example inputs the tracer runs on (export_ without explicit inputs).
  int64_t example_batch = 2;
  int64_t example_seq = 8;
  // Weight quantisation during export (quantizer_config.h); empty scheme = none. The
  // quantize stage runs after the node fixes, for every backend.
  QuantizerConfig quantizer;

  // The spec as DynamicShapes (nullopt when dynamic_shapes_json is empty).
  std::optional<DynamicShapes> dynamic_shapes() const;
};

// How AutoExportConfig reads one export_format: its config class and the keys it adds to
// the native ones. Each backend registers its format next to its config class
// (exporters/onnx/onnx_config.cpp); "native" is built in.
struct ConfigFormat {
  std::vector<std::string> extra_keys;
  std::function<std::unique_ptr<NativeExportConfig>()> make;
  // Reads the extra keys of the JSON object into the config made by `make` (the native
  // keys are read already) and checks their values; errors name `origin`.
  std::function<void(const nlohmann::ordered_json& j, NativeExportConfig& config,
                     const std::string& origin)>
      read_extra;
};
void register_config_format(const std::string& format, ConfigFormat f);

// Picks the config class from the "export_format" key.
class AutoExportConfig {
 public:
  // `origin` names the JSON's source (a file) in errors. The formats: native and the
  // registered ones (onnx).
  static std::unique_ptr<NativeExportConfig> from_json(const std::string& text,
                                                       const std::string& origin = "config");
  static std::vector<std::string> known_formats();
};

}  // namespace ingot::exporters
