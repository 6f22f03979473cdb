// Export configurations (transformers.exporters' DynamoConfig / OnnxConfig /
// AutoExportConfig, natively).
//
//   NativeExportConfig c;                 // the ExportedProgram itself (.ingot)
//   c.dynamic = true;                     // batch and seq dims of every input are dynamic
//   OnnxConfig o;                         // adds opset, external data, optimize, output path
//   auto any = AutoExportConfig::from_json(R"({"export_format": "onnx", "dynamic": true})");
//   std::string back = any->to_json();    // the same settings, every field spelled out
//
// Every config knows its format ("native", "onnx"); AutoExporter (exporter.h) picks the
// exporter from it. JSON keys are the field names below; an unknown key or format is a
// ValueError that lists the known ones.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/export/export.h"

namespace ingot::exporters {

// What every exporter's tracing stages read.
struct NativeExportConfig {
  NativeExportConfig() = default;
  virtual ~NativeExportConfig() = default;
  NativeExportConfig(const NativeExportConfig&) = default;
  NativeExportConfig& operator=(const NativeExportConfig&) = default;

  // "native" or "onnx": which exporter reads this config.
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

  // The spec as DynamicShapes (nullopt when dynamic_shapes_json is empty).
  std::optional<DynamicShapes> dynamic_shapes() const;
};

// ONNX: the native fields plus what the ONNX exporter and its writer need.
struct OnnxConfig : NativeExportConfig {
  std::string export_format() const override { return "onnx"; }
  std::unique_ptr<NativeExportConfig> clone() const override {
    return std::make_unique<OnnxConfig>(*this);
  }
  std::string to_json() const override;

  int64_t opset = 18;  // kDefaultOpset; 17..28
  // "auto": initializers go to `<model>.data` when the weights exceed 1 GiB (protobuf
  // cannot hold 2 GiB); "always" / "never".
  std::string external_data = "auto";
  // Initializers of at least this many bytes go to the external file.
  int64_t external_threshold = 1024;
  // Runs the ONNX-level optimiser (constant folding of shape computations, dead-node
  // removal) after translation.
  bool optimize = false;
  // Where save() writes by default (the CLI's -o); may be empty.
  std::string output_path;
};

// Picks the config class from the "export_format" key.
class AutoExportConfig {
 public:
  // `origin` names the JSON's source (a file) in errors. The formats: native, onnx.
  static std::unique_ptr<NativeExportConfig> from_json(const std::string& text,
                                                       const std::string& origin = "config");
  static std::vector<std::string> known_formats();
};

}  // namespace ingot::exporters
