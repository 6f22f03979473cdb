#include "ingot/formats/ggml_quantize.h"

#include <algorithm>
#include <cmath>

#include "ingot/core/error.h"
#include "ingot/core/half.h"
#include "ingot/formats/ggml_blocks.h"
#include "ingot/formats/ggml_fit.h"
#include "ingot/formats/ggml_refine.h"

namespace ingot::formats {
namespace {

float f16_round(float v) {
  return Half::to_float(Half::from_float(v));
}

// σ² of the weighting sqrt(σ² + x²): the row's mean square (summed in float, in order, as
// the reference fixtures are).
float row_mean_square(const float* x, int64_t cols) {
  float sum_x2 = 0;
  for (int64_t c = 0; c < cols; ++c) sum_x2 += x[c] * x[c];
  return sum_x2 / float(cols);
}

// The 32 error weights of the block at xb: (importance or 1) * sqrt(σ² + x²).
void block_weights(const float* xb, const float* importance, float sigma2, float* w) {
  for (int64_t j = 0; j < kGgmlBlock; ++j)
    w[j] = (importance ? importance[j] : 1.f) * std::sqrt(sigma2 + xb[j] * xb[j]);
}

// Q8_0: llama.cpp's quantize_row_q8_0_ref (round half away from zero; no importance).
// Refined: the f16 scale searched around it (refine_scale_block), each weight's error
// weighted by (importance or 1) * sqrt(σ² + x²) as Q5_0's.
void q8_0_row(const float* x, int64_t cols, const float* importance, bool refine,
              std::vector<uint8_t>& out) {
  int8_t q[kGgmlBlock];
  const float sigma2 = refine ? row_mean_square(x, cols) : 0.f;
  for (int64_t b = 0; b < cols; b += kGgmlBlock) {
    float amax = 0;
    for (int64_t j = 0; j < kGgmlBlock; ++j) amax = std::max(amax, std::fabs(x[b + j]));
    float d = amax / 127;
    const float id = d != 0 ? 1 / d : 0.f;
    for (int64_t j = 0; j < kGgmlBlock; ++j) q[j] = int8_t(std::round(x[b + j] * id));
    if (refine && d != 0) {
      float w[kGgmlBlock];
      int lv[kGgmlBlock];
      block_weights(x + b, importance ? importance + b : nullptr, sigma2, w);
      refine_scale_block(x + b, w, int(kGgmlBlock), -128, 127, d, lv);
      for (int64_t j = 0; j < kGgmlBlock; ++j) q[j] = int8_t(lv[j]);
    }
    put_q8_0_block(d, q, out);
  }
}

// Q5_0: the largest |x| on level -16 without importance (quantize_row_q5_0_ref), else the
// weighted symmetric search; refined without importance: the search with unit importance.
void q5_0_row(const float* x, int64_t cols, const float* importance, bool refine,
              std::vector<uint8_t>& out) {
  uint8_t q[kGgmlBlock];
  const bool search = importance || refine;
  const float sigma2 = search ? row_mean_square(x, cols) : 0.f;
  for (int64_t b = 0; b < cols; b += kGgmlBlock) {
    const float* xb = x + b;
    if (search) {
      float w[kGgmlBlock];
      block_weights(xb, importance ? importance + b : nullptr, sigma2, w);
      float d = fit::symmetric(int(kGgmlBlock), 16, xb, q, w);
      if (refine && d != 0) {
        int lv[kGgmlBlock];
        refine_scale_block(xb, w, int(kGgmlBlock), -16, 15, d, lv);
        for (int64_t j = 0; j < kGgmlBlock; ++j) q[j] = uint8_t(lv[j] + 16);
      }
      put_q5_0_block(d, q, out);
      continue;
    }
    float amax = 0, peak = 0;
    for (int64_t j = 0; j < kGgmlBlock; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        peak = xb[j];
      }
    }
    const float d = peak / -16;
    const float id = d != 0 ? 1 / d : 0.f;
    for (int64_t j = 0; j < kGgmlBlock; ++j) q[j] = uint8_t(std::min(31, int(xb[j] * id + 16.5f)));
    put_q5_0_block(d, q, out);
  }
}

// Q5_1: the range [min, max] on 0..31 without importance (quantize_row_q5_1_ref), else the
// weighted affine search; refined without importance: the search with unit importance.
void q5_1_row(const float* x, int64_t cols, const float* importance, bool refine,
              std::vector<uint8_t>& out) {
  uint8_t q[kGgmlBlock];
  const bool search = importance || refine;
  const float sigma2 = search ? row_mean_square(x, cols) : 0.f;
  for (int64_t b = 0; b < cols; b += kGgmlBlock) {
    const float* xb = x + b;
    if (search) {
      float w[kGgmlBlock], min = 0;
      block_weights(xb, importance ? importance + b : nullptr, sigma2, w);
      const float d = fit::affine(int(kGgmlBlock), 31, xb, w, q, &min, -0.9f, 0.05f, 36);
      put_q5_1_block(d, -min, q, out);
      continue;
    }
    float lo = xb[0], hi = xb[0];
    for (int64_t j = 1; j < kGgmlBlock; ++j) lo = std::min(lo, xb[j]), hi = std::max(hi, xb[j]);
    const float d = (hi - lo) / 31;
    const float id = d != 0 ? 1 / d : 0.f;
    for (int64_t j = 0; j < kGgmlBlock; ++j)
      q[j] = uint8_t(std::min(31, int((xb[j] - lo) * id + 0.5f)));
    put_q5_1_block(d, lo, q, out);
  }
}

// One Q4_K (nmax 15) or Q5_K (nmax 31) super-block of 256 weights.
void k_affine_block(const float* x, int nmax, const float* importance, bool refine,
                    std::vector<uint8_t>& out) {
  uint8_t L[kGgmlSuperBlock], sc[8], mn[8];
  float scales[8], mins[8], sw[8], w[kGgmlSuperBlock];
  float d, dmin;
  if (importance) {
    float sum_x2 = 0;
    for (int64_t l = 0; l < kGgmlSuperBlock; ++l) sum_x2 += x[l] * x[l];
    const float sigma2 = 2 * sum_x2 / float(kGgmlSuperBlock);
    for (int j = 0; j < 8; ++j) {
      const float* xj = x + 32 * j;
      float* wj = w + 32 * j;
      float sum_w = 0;
      for (int l = 0; l < 32; ++l) {
        wj[l] = importance[32 * j + l] * std::sqrt(sigma2 + xj[l] * xj[l]);
        sum_w += wj[l];
      }
      sw[j] = sum_w;
      scales[j] = fit::affine(32, nmax, xj, wj, L + 32 * j, &mins[j], -0.9f, 0.05f, 36);
    }
    d = fit::codes(8, 63, scales, sc, sw);
    dmin = fit::codes(8, 63, mins, mn, sw);
  } else {
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      const float* xj = x + 32 * j;
      float* wj = w + 32 * j;
      float sum_x2 = 0;
      for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
      const float av = std::sqrt(sum_x2 / 32);
      for (int l = 0; l < 32; ++l) wj[l] = av + std::fabs(xj[l]);
      scales[j] = nmax == 15 ? fit::affine(32, nmax, xj, wj, L + 32 * j, &mins[j], -1.f, 0.1f, 20)
                             : fit::affine(32, nmax, xj, wj, L + 32 * j, &mins[j], -0.5f, 0.1f, 15);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
      sc[j] = uint8_t(std::clamp(fit::nearest(inv_scale * scales[j]), 0, 63));
      mn[j] = uint8_t(std::clamp(fit::nearest(inv_min * mins[j]), 0, 63));
    }
    d = max_scale / 63.f;
    dmin = max_min / 63.f;
  }
  // The levels against the grid the block stores (f16 factors times 6-bit codes); a
  // sub-block whose scale codes to 0 keeps its searched levels (they decode to -min).
  const float d16 = f16_round(d), dmin16 = f16_round(dmin);
  for (int j = 0; j < 8; ++j) {
    const float dj = d16 * float(sc[j]);
    if (dj == 0) continue;
    const float mj = dmin16 * float(mn[j]);
    for (int l = 0; l < 32; ++l)
      L[32 * j + l] = uint8_t(std::clamp(fit::nearest((x[32 * j + l] + mj) / dj), 0, nmax));
  }
  if (refine) refine_affine_superblock(x, w, nmax, d, dmin, sc, mn, L);
  if (nmax == 15)
    put_q4_k_block(d, dmin, sc, mn, L, out);
  else
    put_q5_k_block(d, dmin, sc, mn, L, out);
}

// One Q6_K super-block of 256 weights.
void q6_k_block(const float* x, const float* importance, bool refine, std::vector<uint8_t>& out) {
  uint8_t L[kGgmlSuperBlock];
  int8_t sc[16];
  float scales[16];
  float max_abs = 0, peak = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] =
        fit::symmetric(16, 32, x + 16 * j, L + 16 * j, importance ? importance + 16 * j : nullptr);
    if (std::fabs(scales[j]) > max_abs) {
      max_abs = std::fabs(scales[j]);
      peak = scales[j];
    }
  }
  if (max_abs < 1e-15f) {  // all zero: d = 0, every code and level 0
    std::fill(L, L + kGgmlSuperBlock, uint8_t(0));
    std::fill(sc, sc + 16, int8_t(0));
    put_q6_k_block(0.f, sc, L, out);
    return;
  }
  const float inv = -128.f / peak;
  float d = 1 / inv;
  for (int j = 0; j < 16; ++j) sc[j] = int8_t(std::min(127, fit::nearest(inv * scales[j])));
  const float d16 = f16_round(d);
  for (int j = 0; j < 16; ++j) {
    const float dj = d16 * float(sc[j]);
    if (dj == 0) continue;
    for (int l = 0; l < 16; ++l)
      L[16 * j + l] = uint8_t(std::clamp(fit::nearest(x[16 * j + l] / dj), -32, 31) + 32);
  }
  if (refine) {
    float w[kGgmlSuperBlock];
    for (int i = 0; i < kGgmlSuperBlock; ++i) w[i] = importance ? importance[i] : x[i] * x[i];
    refine_symmetric_superblock(x, w, d, sc, L);
  }
  put_q6_k_block(d, sc, L, out);
}

}  // namespace

bool can_quantize(GgmlType type) {
  return type == GgmlType::Q8_0 || type == GgmlType::Q5_0 || type == GgmlType::Q5_1 ||
         type == GgmlType::Q4_K || type == GgmlType::Q5_K || type == GgmlType::Q6_K;
}

std::vector<uint8_t> quantize_rows(GgmlType type, const float* x, int64_t rows, int64_t cols,
                                   const float* importance, KQuantSearch search) {
  const bool refine = search == KQuantSearch::Refined;
  INGOT_CHECK(
      can_quantize(type), ValueError,
      "[ggml quantize] cannot quantise to {} (quantised: Q8_0, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)",
      ggml_type_name(type));
  const GgmlTypeTraits t = *ggml_type_traits(uint32_t(type));
  INGOT_CHECK(cols % t.block_size == 0, ValueError,
              "[ggml quantize] rows of {} values are not whole {} blocks of {}", cols, t.name,
              t.block_size);
  std::vector<uint8_t> out;
  out.reserve(size_t(rows * (cols / t.block_size) * t.type_size));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    switch (type) {
      case GgmlType::Q8_0:
        q8_0_row(row, cols, importance, refine, out);
        break;
      case GgmlType::Q5_0:
        q5_0_row(row, cols, importance, refine, out);
        break;
      case GgmlType::Q5_1:
        q5_1_row(row, cols, importance, refine, out);
        break;
      case GgmlType::Q4_K:
      case GgmlType::Q5_K:
        for (int64_t b = 0; b < cols; b += kGgmlSuperBlock)
          k_affine_block(row + b, type == GgmlType::Q4_K ? 15 : 31,
                         importance ? importance + b : nullptr, refine, out);
        break;
      default:
        for (int64_t b = 0; b < cols; b += kGgmlSuperBlock)
          q6_k_block(row + b, importance ? importance + b : nullptr, refine, out);
        break;
    }
  }
  return out;
}

}  // namespace ingot::formats
