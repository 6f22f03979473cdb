// Row kernels behind quantized_matmul (quantized_gemv.h): one x row against rows
// [r0, r1) of a packed weight, written to y[r0..r1). Scalar and AVX-512 versions compute
// the same sums (per group: sum of (q - z) * x, then times the group's scale).
#pragma once

#include <vector>

#include "ingot/ops/cpu/quantized_gemv.h"

#define INGOT_TARGET_AVX512_QUANT \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))
#define INGOT_TARGET_AVX2_QUANT __attribute__((target("avx2,fma,f16c")))
#define INGOT_TARGET_AVX512_VNNI \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c")))

namespace ingot::cpu::detail {

void quantized_gemv_rows_scalar(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                                float* y);
// The AVX-512 4-bit kernel reads x with each 32-block reordered to [even k, odd k]:
// out[c + j] = x[c + 2j], out[c + 16 + j] = x[c + 2j + 1] (k % 32 == 0).
void permute_int4_activations(const float* x, int64_t k, float* out);
// bits 4: x permuted by permute_int4_activations.
void quantized_gemv_rows_avx512(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                                float* y);
// bits 4: x permuted by permute_int4_activations (as for AVX-512).
void quantized_gemv_rows_avx2(const float* x, const PackedWeight& w, int64_t r0, int64_t r1,
                              float* y);
void dequantize_rows_scalar(const PackedWeight& w, int64_t r0, int64_t r1, float* out);
void dequantize_rows_avx2(const PackedWeight& w, int64_t r0, int64_t r1, float* out);
void dequantize_rows_avx512(const PackedWeight& w, int64_t r0, int64_t r1, float* out);

// --- Int8 activations (QuantActivations::Int8) ---------------------------------------
//
// x rows [m, k] quantised per block of 32 along k: xs[b] = max|x in b| / 127,
// q[c] = round(x[c] / xs[b]) in [-127, 127] (the last block may be short). The VNNI and
// AVX2 kernels read the same integers in their dot-product order, as 32-bit lanes (4 bytes per
// lane per vpdpbusd operand):
//  - bits 8: packed = q padded with zeros to kp (a multiple of 64); lane L holds
//    q[4L .. 4L + 3].
//  - bits 4: per 128-element chunk c0, packed = [q[c0 + 2j] for j < 64 (the weights in
//    low nibbles), q[c0 + 2j + 1] for j < 64 (high nibbles)], kp a multiple of 128; lane
//    L (chunk L / 16, l = L % 16) holds elements c0 + 8l .. c0 + 8l + 7.
//  lane_scales[L] = xs of the lane's block; lane_sums[L] = sum of the lane's q;
//  lane_init[L] = -2^(bits-1) * lane_sums[L] (the fixed zero point's correction, so a
//  dot product started from it sums (w - z) * q exactly in int32);
//  bits 4: block_init[L] = the sum of lane_init over L's 32-block (lanes 4b .. 4b + 3), the
//  correction of a dot product over the whole block.
struct Int8Activations {
  int bits = 8;
  int64_t m = 0, k = 0, blocks = 0, kp = 0, lanes = 0;
  std::vector<int8_t> q;            // [m, k]
  std::vector<float> block_scales;  // [m, blocks]
  std::vector<int8_t> packed;       // [m, kp]     (lane layout only)
  std::vector<float> lane_scales;   // [m, lanes]  (lane layout only)
  std::vector<int32_t> lane_sums;   // [m, lanes]  (lane layout only)
  std::vector<int32_t> lane_init;   // [m, lanes]  (lane layout only)
  std::vector<int32_t> block_init;  // [m, lanes]  (lane layout, bits 4 only)
};

// Whether the int8-activation kernels cover w's layout (see QuantActivations).
bool int8_activation_layout(const PackedWeight& w);
// One x row of k values to int8 in 32-blocks: scales[b] = d = max|x| / 127 over block b,
// q = clamp(round-half-even(x / d), -127, 127) (computed as x * (1 / d)); d = 0 gives q = 0.
void quantize_row_scalar(const float* x, int64_t k, int8_t* q, float* scales);
// The same values bit for bit (finite x), eight lanes at a time.
void quantize_row_avx2(const float* x, int64_t k, int8_t* q, float* scales);
// Quantises x rows (ldx apart) for weights of `bits`; `lane_layout` adds the arrays of the
// VNNI / AVX2 kernels.
void quantize_activations(const float* x, int64_t ldx, int64_t m, int64_t k, int bits,
                          bool lane_layout, Int8Activations& out);
// y[r] for r in [r0, r1) from activation row i: sum over 32-blocks b (group g of b) of
// xs[b] * s[r, g] * sum_{c in b} (q_w[r, c] - z[r, g]) * q_x[c].
void int8act_rows_scalar(const Int8Activations& a, int64_t i, const PackedWeight& w, int64_t r0,
                         int64_t r1, float* y);
void int8act_rows_vnni(const Int8Activations& a, int64_t i, const PackedWeight& w, int64_t r0,
                       int64_t r1, float* y);
// Every x row of `a` at once: y[i, r] (rows ldy apart) for i < a.m, r in [r0, r1). The
// kernels of quantized_gemv_int8act_ymm.h: vpmaddubsw + vpmaddwd (avx2) or AVX-VNNI
// vpdpbusd (avxvnni); the same integer sums in the same f32 order, so the same bits.
void int8act_rows_avx2(const Int8Activations& a, const PackedWeight& w, int64_t r0, int64_t r1,
                       float* y, int64_t ldy);
void int8act_rows_avxvnni(const Int8Activations& a, const PackedWeight& w, int64_t r0, int64_t r1,
                          float* y, int64_t ldy);

// --- Prefill GEMM with int8 activations (quantized_gemm_vnni.cpp, quantized_gemm_ymm.h) --
//
// The same quantised x (values of quantize_activations, bit for bit) in a panel layout
// where the `lanes` int32 lanes of a vector (16: zmm, 8: ymm) are that many x rows: rows are
// grouped into panels of `lanes` (the last one padded with zero rows), k into blocks of 32
// (the last one padded with zeros) and steps of 4, so that one dot product (vpdpbusd, or
// vpmaddubsw + vpmaddwd) multiplies a broadcast dword of 4 weights of one W row with 4
// activations of each of the panel's rows:
//  - q [panels, steps = 8 * blocks, lanes, 4 bytes]: q[P][t][L][j] = q_x[lanes P + L, 4t + j]
//    (even_odd, for 4-bit weights: within each 32-block, positions 0..15 hold the block's
//    even elements and 16..31 its odd ones, the order the kernels unpack nibbles in).
//  - scales [panels, blocks, lanes]: the block scale of row lanes P + L (0 for padding rows).
//  - corr [panels, blocks, lanes]: the block's zero-point term: -2^(bits-1) * sum q_x for
//    weights with the fixed zero point, -sum q_x for weights with zero points (the kernel
//    multiplies it by the group's z), so a lane that starts from it sums (w - z) * q_x.
struct PanelActivations {
  int64_t m = 0, k = 0, blocks = 0, panels = 0;
  int lanes = 16;  // x rows per panel: 16 (zmm) or 8 (ymm)
  bool even_odd = false;
  std::vector<int8_t> q;
  std::vector<float> scales;
  std::vector<int32_t> corr;
  int64_t steps() const { return 8 * blocks; }
  int64_t panel_bytes() const { return steps() * lanes * 4; }
  // Sizes the layout for m x rows of `lanes` per panel against weights `w`; returns the
  // factor of corr (-2^(bits-1) for the fixed zero point, -1 with zero points).
  int32_t resize(int64_t rows, const PackedWeight& w, int panel_lanes) {
    m = rows;
    k = w.k;
    lanes = panel_lanes;
    blocks = (w.k + 31) / 32;  // 32-element activation blocks
    panels = (rows + lanes - 1) / lanes;
    even_odd = w.bits == 4;
    q.resize(size_t(panels * panel_bytes()));
    scales.resize(size_t(panels * blocks * lanes));
    corr.resize(size_t(panels * blocks * lanes));
    return w.zeros ? -1 : -(1 << (w.bits - 1));
  }
};

// Quantises x rows (ldx apart) into the panel layout for weights `w` (its bits and whether
// it has zero points), threaded over panels: 16 lanes (AVX-512) or 8 (AVX2).
void quantize_activation_panels(const float* x, int64_t ldx, int64_t m, const PackedWeight& w,
                                PanelActivations& out);
void quantize_activation_panels_ymm(const float* x, int64_t ldx, int64_t m, const PackedWeight& w,
                                    PanelActivations& out);
// y[i, r] (rows ldy apart) for every x row i < a.m and W row r: the same sums as
// int8act_rows_scalar, in int32 per 32-block and f32 across blocks. Threaded over W rows.
// vnni: AVX512-VNNI on 16-lane panels; avx2 (vpmaddubsw + vpmaddwd) and avxvnni (VEX
// vpdpbusd) on 8-lane panels, the same integer sums in the same f32 order, so the same bits.
void int8act_gemm_vnni(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy);
void int8act_gemm_avx2(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy);
void int8act_gemm_avxvnni(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy);

}  // namespace ingot::cpu::detail
