// Float rows into ggml block types, choosing each block's scales and levels (the
// quantisation llama.cpp's llama-quantize does; ggml_blocks.h only packs given levels).
//
//   Q8_0  per 32: d = max|x| / 127, q = round(x / d)                        (no search)
//   Q5_0  per 32: d = the largest |x| / -16 (no importance), else the symmetric search
//   Q5_1  per 32: the range on 0..31 (no importance), else the affine search (fit::affine)
//   Q4_K  per 256: eight 32-weight sub-blocks, each an affine grid (scale and minimum,
//   Q5_K         levels 0..15 / 0..31) searched by fit::affine; the sub-block scales and
//                minima as 6-bit codes of two f16 super-block factors d / dmin; the levels
//                then re-rounded against the coded grid
//   Q6_K  per 256: sixteen 16-weight sub-blocks, each a symmetric grid (levels -32..31)
//                searched by fit::symmetric; the scales as int8 codes of an f16 d; the
//                levels re-rounded against the coded grid
//
// Importance: `importance` (one value per column, e.g. the calibration's mean squared
// input activations, llama.cpp's imatrix) weights each weight's squared error; null means
// llama.cpp's weighting without an imatrix. The error weight of weight x[c] is then:
//
//   type   with importance q[c]                 without
//   Q4_K   q[c] * sqrt(σ² + x[c]²)               |x[c]| + rms of its sub-block (qkx2 search,
//   Q5_K   σ² = 2 * mean x² of the super-block     sub-block scales on a plain 63-step map)
//   Q6_K   q[c]                                  x[c]²
//   Q5_0   q[c] * sqrt(σ² + x[c]²),              absmax (Q5_0) / range (Q5_1) grid, no search
//   Q5_1   σ² = the row's mean x²
//   Q8_0   ignored (absmax grid; refined: as Q5_0, below)
//
// With importance the sub-block scales and minima are coded by fit::codes, weighted by
// each sub-block's total error weight; without, on max / 63 (llama.cpp's two paths).
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/formats/ggml_types.h"

namespace ingot::formats {

// How the grids are chosen: exactly llama.cpp's quantisers (above), or refined: Q4_K / Q5_K
// / Q6_K super-blocks after llama.cpp's search refined by ingot (ggml_refine.h: never a
// higher weighted error), and Q5_0 / Q5_1 without importance searched as with unit
// importance (weights sqrt(σ² + x²)) instead of the plain absmax / range grid, and Q5_0 /
// Q8_0 blocks' f16 scale then searched over its f16 neighbours (refine_scale_block), Q8_0
// weighted like Q5_0.
enum class KQuantSearch { LlamaCpp, Refined };

// Whether quantize_rows can produce `type`: Q8_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K.
bool can_quantize(GgmlType type);

// `rows` rows of `cols` floats (row-major) as `type` blocks, rows one after the other.
// `importance`: `cols` non-negative floats or null. ValueError when `cols` is not a
// multiple of the type's block size or the type is not one of can_quantize's.
std::vector<uint8_t> quantize_rows(GgmlType type, const float* x, int64_t rows, int64_t cols,
                                   const float* importance,
                                   KQuantSearch search = KQuantSearch::LlamaCpp);

}  // namespace ingot::formats
