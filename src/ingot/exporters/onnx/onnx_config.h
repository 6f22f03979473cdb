// OnnxConfig (transformers.exporters' OnnxConfig): the native config's fields plus
// what the ONNX exporter and its writer need. AutoExportConfig reads it for
// "export_format": "onnx" (registered in onnx_config.cpp).
#pragma once

#include <memory>
#include <string>

#include "ingot/exporters/config.h"

namespace ingot::exporters {

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
  // ingot::quantized_linear (a `quantizer` export) as ONNX Runtime's com.microsoft
  // MatMulNBits ("matmul_nbits") or standard DequantizeLinear + MatMul
  // ("dequantize_linear"; int4 needs opset >= 21 for uint4 blocked dequantisation).
  std::string quantized_matmul = "matmul_nbits";
  // Generation: ONNX Runtime GenAI's directory (genai_config.json next to the decoder):
  // the decode step in the growing past/present cache layout (CacheLayout::kPastPresent)
  // instead of the static in-place cache. No effect on a forward export.
  bool genai = false;
  // Where save() writes by default (the CLI's -o); may be empty.
  std::string output_path;
};

}  // namespace ingot::exporters
