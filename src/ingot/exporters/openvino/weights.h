// Weight compression (OpenVINOConfig::compress_to_fp16): every float32 Const of at least
// kCompressMinElements elements becomes a float16 Const followed by a Convert to float32
// marked as decompression in its rt_info, the form OpenVINO's own
// save_model(compress_to_fp16=True) writes and its CPU plugin folds into the weights.
// Small constants (scalars, shape arithmetic) stay float32.
#pragma once

#include "ingot/exporters/openvino/ir.h"

namespace ingot::exporters::openvino {

inline constexpr int64_t kCompressMinElements = 16;

// Rewrites `g` (bodies included); returns how many Consts were compressed.
int64_t compress_to_fp16(Graph& g);

}  // namespace ingot::exporters::openvino
