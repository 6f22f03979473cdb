// The grid searches of ggml's k-quants (llama.cpp's ggml-quants.c, reimplemented from its
// published description): for one small group of weights, the scale (and minimum) whose
// integer levels minimise an importance-weighted squared error. ggml_quantize.cpp builds
// the block types from them.
//
// Every function computes in float32 in a fixed order (no FMA: the build's baseline is
// x86-64 and ISO C++ does not contract), so tools/reference/make_kquant_fixtures.py, which
// does the same float32 operations in the same order, gets the same bits.
#pragma once

#include <cstdint>

namespace ingot::formats::fit {

// Round half to even, as ggml's nearest_int (|v| < 2^22).
int nearest(float v);

// Affine grid, x[i] ≈ scale * L[i] - min_out with L[i] in 0..nmax and min_out >= 0 (the
// group's minimum, never above 0): the range [min(x, 0), max(x)] is mapped onto
// nmax + rmin + s * rdelta levels for s = 0..steps; for each candidate the levels are
// rounded and scale and minimum refit by weighted least squares (the minimum clamped to
// 0, the scale then refit alone), and the candidate with the lowest sum of
// w[i] * (scale * L[i] - min - x[i])^2 is kept (the plain range map is the first
// candidate). Returns the scale; 0 (all L 0) when the range is empty.
float affine(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
             float rmin, float rdelta, int steps);

// Symmetric grid, x[i] ≈ scale * (L[i] - nmax) with L[i] - nmax in -nmax..nmax-1: the
// largest |x| mapped onto -nmax, -nmax ± 0.1 s (s = 1..9), each candidate's scale refit by
// weighted least squares, the one with the largest (Σ w x l)^2 / Σ w l^2 (the lowest
// error) kept. `w` null: w[i] = x[i]^2. Returns the scale (negative when the largest |x|
// is positive); 0 (L all 0) for a group of zeros (|x| < 1e-15).
float symmetric(int n, int nmax, const float* x, uint8_t* L, const float* w);

// Non-negative values x (sub-block scales or minima) as codes: x[i] ≈ scale * L[i] with
// L[i] in 0..nmax: the largest x on nmax ± 0.1 s (s = 1..4) by weighted error, then up
// to five passes moving single codes to their least-squares optimum. Returns the scale;
// 0 (L all 0) when every x is below 1e-15.
float codes(int n, int nmax, const float* x, uint8_t* L, const float* w);

}  // namespace ingot::formats::fit
