// ingot's refinement of a k-quant super-block after llama.cpp's search (ggml_quantize.h):
// llama.cpp codes the sub-block scales once and re-rounds the levels; this continues with
// a few rounds of coordinate descent on the block's own weighted squared error
//   Σ w[i] (decoded[i] - x[i])²,  decoded as the reader decodes (f16 factors, 6-/8-bit codes)
// each round (1) moves every sub-block's codes within ±2 to the best pair, the levels
// rounded to nearest on each candidate grid, then (2) refits the f16 super-block
// factor(s) by weighted least squares with codes and levels fixed and re-rounds the
// levels; a round is kept only when the error drops, so the result is never worse than
// the search's. Measured on SmolLM2 in docs/gguf.md.
#pragma once

#include <cstdint>

namespace ingot::formats {

// Q4_K (nmax 15) / Q5_K (nmax 31): x, w, L [256]; codes sc, mn [8]; d, dmin the factors
// (before f16 rounding; updated in place, as are the codes and levels).
void refine_affine_superblock(const float* x, const float* w, int nmax, float& d, float& dmin,
                              uint8_t* sc, uint8_t* mn, uint8_t* L);

// Q6_K: x, w, L [256] (levels 0..63 meaning q - 32); codes sc [16]; d the factor.
void refine_symmetric_superblock(const float* x, const float* w, float& d, int8_t* sc, uint8_t* L);

// A block of one f16 scale (Q5_0: levels lo..hi = -16..15, Q8_0: -128..127): x[i] ≈ d *
// q[i]. Searches the f16 values within ±16 steps (ulps) of d, each with its nearest
// levels, then refits d by weighted least squares and searches around it again, while
// the weighted error drops. On return d is an f16 value and q the levels for it; never a
// higher error than d's own nearest levels.
void refine_scale_block(const float* x, const float* w, int n, int lo, int hi, float& d, int* q);

}  // namespace ingot::formats
