// GPTQ (Frantar et al., "GPTQ: Accurate Post-Training Quantization for Generative
// Pre-trained Transformers", 2022): the columns of W [n, k] are quantised one after the
// other, and each column's rounding error is spread over the columns not yet quantised so
// that the layer's output on the calibration inputs moves least: with H = mean x^T x
// (damped) and U the upper Cholesky factor of H^-1,
//   err_r = (W[r, j] - Q[r, j]) / U[j, j];   W[r, l] -= err_r * U[j, l]  for l after j.
// Groups take their grid when their first column is reached (from the updated weights);
// with act_order the columns go in decreasing H[j, j] order and every group's grid is
// fixed up front from the original weights (the packed layout keeps groups contiguous).
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/exporters/quantizer.h"

namespace ingot::exporters::quant {

struct GptqOptions {
  double damp = 0.01;           // added to H's diagonal, as a fraction of its mean
  bool act_order = false;       // columns in decreasing H[j, j] order
  bool search_scales = true;    // group grids by searched_grid (else range_grid)
  int64_t block = 64;           // columns whose updates to later columns are batched
};

// U [k, k] row-major, upper triangular: the Cholesky factor of (H + damp I)^-1 with
// H^-1 = U^T U, in the column order `order` (H's rows and columns permuted by it). H's
// zero-diagonal (dead) entries are set to 1 first. Raises the damping (x10, up to 3
// times) when H is not positive definite; ValueError naming `name` after that.
std::vector<double> inverse_hessian_factor(const float* hessian, int64_t k,
                                           const std::vector<int64_t>& order, double damp,
                                           const std::string& name);

// What GPTQ needs of one Hessian, shared by the linears reading the same input (q/k/v):
// the column order and the factor U (float) in that order.
struct HessianFactor {
  std::vector<int64_t> order;
  std::vector<float> u;  // [k, k]
};
HessianFactor factor_hessian(const float* hessian, int64_t k, const GptqOptions& options,
                             const std::string& name);

// W on its grid by GPTQ with `hessian` [k, k] (mean x^T x of the layer's inputs) and its
// factor (factor_hessian; computed here when null).
QuantizedWeight gptq_quantize(const WeightToQuantize& w, const float* hessian,
                              const GptqOptions& options, const HessianFactor* factor = nullptr);

}  // namespace ingot::exporters::quant
