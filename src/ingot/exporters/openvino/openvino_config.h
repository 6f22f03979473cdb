// OpenVINOConfig (transformers.exporters' OpenVINOConfig): the native config's fields
// plus what the OpenVINO exporter and its IR writer need. AutoExportConfig reads it for
// "export_format": "openvino" (registered in openvino_config.cpp).
#pragma once

#include <memory>
#include <string>

#include "ingot/exporters/config.h"

namespace ingot::exporters {

struct OpenVINOConfig : NativeExportConfig {
  std::string export_format() const override { return "openvino"; }
  std::unique_ptr<NativeExportConfig> clone() const override {
    return std::make_unique<OpenVINOConfig>(*this);
  }
  std::string to_json() const override;

  // float32 weights are stored as float16 Consts followed by a decompression Convert
  // (what OpenVINO's own save_model(compress_to_fp16=True) writes); the graph computes
  // in float32.
  bool compress_to_fp16 = false;
  // Mutated inputs (the static KV cache of a decode component, mutated buffers) are held
  // in ReadValue / Assign variables; false exposes them as input.<name> / output.<name>.
  bool stateful = true;
  // Where save() writes by default (the CLI's -o); may be empty.
  std::string output_path;
};

}  // namespace ingot::exporters
