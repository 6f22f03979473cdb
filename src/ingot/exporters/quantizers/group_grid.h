// The grid of one group of weights: its scale and zero point, chosen by round to nearest
// (the range rule of ops/cpu/quantize_pack.h) or by searching the scale that minimises
// the weighted squared reconstruction error sum_i importance_i * (w_i - s * (q_i - z))^2.
// Shared by the quantisers (quantizers/*.cpp).
#pragma once

#include <cstdint>
#include <functional>

#include "ingot/exporters/quantizer.h"

namespace ingot::exporters::quant {

struct GroupGrid {
  float scale = 1.0f;
  int zero = 8;  // the integer value of 0.0: 2^(bits-1) when symmetric
};

// The integer levels of `bits` (8 or 4): values in [0, 2^bits); symmetric grids use
// [-127, 127] (8 bits) or [-8, 7] (4 bits) around the zero 2^(bits-1).
int max_value(int bits);

// Round to nearest: symmetric s = m / -8 (4 bits, m the value of largest magnitude) or
// |m| / 127 (8 bits); with zero points s = (max - min) / 15 over the range widened to 0.
GroupGrid range_grid(const float* w, int64_t len, int bits, bool zero_point);

// The 4-bit grid that minimises the error weighted by `importance` (null: all 1) among
// clipped-range candidates, each scale refitted by weighted least squares; 8-bit grids
// are the range's (clipping 255 levels measured no better).
GroupGrid searched_grid(const float* w, const float* importance, int64_t len, int bits,
                        bool zero_point);

// The integer value of `x` on `grid`, clamped to the grid's levels.
int quantize_value(float x, const GroupGrid& grid, int bits, bool zero_point);

// Every group of `w` on the grid `fit(group values, index of its first column)` chooses,
// each value rounded to nearest on it. Rows in parallel.
using GroupFit = std::function<GroupGrid(const float* values, int64_t first_column)>;
QuantizedWeight quantize_groups(const WeightToQuantize& w, const GroupFit& fit);

}  // namespace ingot::exporters::quant
