// Convolutions over 1 or 2 spatial dims (torch.nn.functional.conv1d / conv2d): a direct
// reference kernel on the CPU; the ExecuTorch backend lowers them to aten::convolution or
// to XNNPACK.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot {

// aten::convolution without transposition: input [N, C, *spatial] (floating), weight
// [O, C / groups, *kernel], bias [O] or undefined -> [N, O, *out_spatial] with
// out = (in + 2 padding - dilation (kernel - 1) - 1) / stride + 1 per spatial dim. One
// stride / padding / dilation value is used for every spatial dim.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                   const std::vector<int64_t>& dilation, int64_t groups,
                   std::source_location where = std::source_location::current());

// F.conv1d: input [N, C, L], weight [O, C / groups, k].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1,
              std::source_location where = std::source_location::current());

// F.conv2d: input [N, C, H, W], weight [O, C / groups, kh, kw]; {h, w} per parameter.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
              std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1,
              std::source_location where = std::source_location::current());

}  // namespace ingot
