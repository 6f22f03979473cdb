// Resampling of spatial dims: bilinear upsampling / downsampling of images and grids.
#pragma once

#include <optional>
#include <source_location>

#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// aten::upsample_bilinear2d, i.e. F.interpolate(mode="bilinear", size=output_size):
// input [N, C, H, W] (floating) -> [N, C, output_size[0], output_size[1]]. With
// align_corners the corner samples of input and output coincide; otherwise pixel
// centres are aligned and scales_h / scales_w (when given) set the coordinate scale.
Tensor upsample_bilinear2d(const Tensor& self, const SymIntList& output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt,
                           std::optional<double> scales_w = std::nullopt,
                           std::source_location where = std::source_location::current());

}  // namespace ingot
