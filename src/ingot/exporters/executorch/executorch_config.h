// ExecutorchConfig (transformers.exporters' ExecutorchConfig): the native config's fields
// plus what the ExecuTorch exporter needs. AutoExportConfig reads it for
// "export_format": "executorch" (registered in executorch_config.cpp).
#pragma once

#include <memory>
#include <string>

#include "ingot/exporters/config.h"

namespace ingot::exporters {

struct ExecutorchConfig : NativeExportConfig {
  ExecutorchConfig() {
    // ExecuTorch plans memory for the largest shape (DYNAMIC_BOUND tensors), so the
    // default bounds of `dynamic` are smaller than the native ones.
    max_batch = 8;
    max_seq = 256;
  }
  std::string export_format() const override { return "executorch"; }
  std::unique_ptr<NativeExportConfig> clone() const override {
    return std::make_unique<ExecutorchConfig>(*this);
  }
  std::string to_json() const override;

  // "portable": every node a portable `.out` kernel. "xnnpack": linear / mm / bmm / conv
  // partitions in XNNPACK delegates (xnnpack_partition.h), the rest portable kernels.
  std::string backend = "portable";
  // Seed 003's meaning: memory-plan the method's inputs / outputs / mutable buffers. With
  // false, the caller binds them (set_input shares the data; set_output_data_ptr), which
  // is how a decode loop writes the mutated cache in place.
  bool alloc_graph_input = true;
  bool alloc_graph_output = true;
  bool alloc_mutable_buffers = true;
  // `quantizer` is the base config's QuantizerConfig (every format has it).
  // Where save() writes by default (the CLI's -o); may be empty.
  std::string output_path;
};

}  // namespace ingot::exporters
