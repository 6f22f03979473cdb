// AVX2 (no VNNI) prefill GEMM of quantized_matmul with int8 activations: the panel kernel of
// quantized_gemm_ymm.h with vpmaddubsw + vpmaddwd dot products, and the activation
// quantiser into the 8-lane panel layout (shared with quantized_gemm_avxvnni.cpp). Only
// reached after the run-time CPU check.
#define INGOT_GEMM_YMM_TARGET "avx2,fma,f16c"
#define INGOT_GEMM_YMM_VNNI 0
#include "ingot/ops/cpu/quantized_gemm_ymm.h"

namespace ingot::cpu::detail {

namespace {

// Panel P of the 8-lane layout: rows 8P .. 8P + 7 of x (zero rows past m). Each row is
// quantised by quantize_row_avx2 (quantize_row_scalar's values bit for bit), then its
// 32-blocks are scattered to their (step, lane) positions.
void quantize_panel_ymm(const float* x, int64_t ldx, int64_t P, int32_t corr_factor,
                        PanelActivations& a) {
  const int64_t kp = a.blocks * kBlock;
  std::vector<int8_t> row(static_cast<size_t>(kp));
  std::vector<float> scales(static_cast<size_t>(a.blocks));
  int8_t* q = a.q.data() + P * a.panel_bytes();
  for (int L = 0; L < kLanes; ++L) {
    const int64_t i = P * kLanes + L;
    std::fill(row.begin(), row.end(), int8_t(0));
    std::fill(scales.begin(), scales.end(), 0.0f);
    if (i < a.m) quantize_row_avx2(x + i * ldx, a.k, row.data(), scales.data());
    for (int64_t b = 0; b < a.blocks; ++b) {
      const int8_t* src = row.data() + b * kBlock;
      int8_t block[kBlock];
      int32_t sum = 0;
      for (int j = 0; j < kBlock; ++j) {
        // even_odd: position j < 16 holds element 2j, j >= 16 element 2(j - 16) + 1
        block[j] = a.even_odd ? src[j < 16 ? 2 * j : 2 * (j - 16) + 1] : src[j];
        sum += block[j];
      }
      for (int j = 0; j < 8; ++j)  // step 8b + j, lane L
        std::memcpy(q + ((8 * b + j) * kLanes + L) * 4, block + 4 * j, 4);
      a.scales[size_t((P * a.blocks + b) * kLanes + L)] = scales[size_t(b)];
      a.corr[size_t((P * a.blocks + b) * kLanes + L)] = corr_factor * sum;
    }
  }
}

}  // namespace

void quantize_activation_panels_ymm(const float* x, int64_t ldx, int64_t m, const PackedWeight& w,
                                    PanelActivations& a) {
  const int32_t factor = a.resize(m, w, kLanes);
  parallel_for(0, a.panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) quantize_panel_ymm(x, ldx, p, factor, a);
  });
}

void int8act_gemm_avx2(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  gemm_ymm(a, w, y, ldy);
}

}  // namespace ingot::cpu::detail
