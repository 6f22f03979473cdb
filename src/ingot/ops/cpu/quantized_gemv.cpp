// quantized_matmul: checks the layout, picks the kernel level and splits the work over
// the thread pool. Decode-sized m streams the packed rows (quantized_gemv_rows_*); larger
// m dequantises kBlockRows rows at a time into a per-task f32 buffer and multiplies with
// cpu::gemm, so the packed bytes are read once per block and the float block stays in L2.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "ingot/core/cpu_features.h"
#include "ingot/core/error.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

namespace ingot::cpu {

namespace {

// Up to this many x rows, each row streams the packed weight (the weight bytes are the
// cost; the dequantise-to-f32 block path wins once its GEMM amortises the conversion).
constexpr int64_t kMaxStreamRows = 4;
constexpr int64_t kBlockRows = 64;  // rows of W dequantised per gemm call
constexpr int64_t kGemvGrain = 16;  // rows of W per thread chunk at least
// Int8 activations: rows of W that every x row visits before the next block, so the
// block's packed bytes are read from memory once and from L1 for the other x rows.
constexpr int64_t kInt8BlockRows = 4;
// Int8 activations on AVX512-VNNI: from this many x rows the panel GEMM
// (quantized_gemm_vnni.cpp: 16 x rows per zmm, W read once per panel tile) replaces the
// per-row kernel (the crossover measured with BM_QuantizedGemv, docs/quantization.md).
constexpr int64_t kPanelMinRows = 5;
// The same for the ymm kernels (quantized_gemm_ymm.h: 8 x rows per ymm) against the ymm row
// kernels, measured with BM_QuantizedGemvPrefillYmm under INGOT_ISA=avx2 on Zen 4 (int8 and
// int4, four shapes, best of 5): the panel GEMM was slower at m = 5 (1.09-1.29x the row
// kernels' time), mixed at 6 (0.93-1.10x), faster from 7 (0.68-0.91x).
constexpr int64_t kYmmPanelMinRows = 7;

// Int8 unless INGOT_QUANT_ACTIVATIONS=float (the opt-out, for A/B runs and exact results).
QuantActivations initial_activations() {
  const char* env = std::getenv("INGOT_QUANT_ACTIVATIONS");
  if (!env || !*env) return QuantActivations::Int8;
  const std::string v = env;
  INGOT_CHECK(v == "int8" || v == "float", ValueError,
              "[quantized_matmul] INGOT_QUANT_ACTIVATIONS must be int8 or float, got '{}'", v);
  return v == "int8" ? QuantActivations::Int8 : QuantActivations::Float;
}

std::atomic<QuantActivations>& active_activations() {
  static std::atomic<QuantActivations> a{initial_activations()};
  return a;
}

// The start value of a panel threshold: `var` from the environment, else `fallback`.
int64_t initial_min_rows(const char* var, int64_t fallback) {
  const char* env = std::getenv(var);
  if (!env || !*env) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(env, &end, 10);
  INGOT_CHECK(*end == 0 && v >= 1, ValueError, "{} must be a positive integer, got '{}'", var, env);
  return int64_t(v);
}

std::atomic<int64_t>& panel_min_rows() {
  static std::atomic<int64_t> rows{initial_min_rows("INGOT_QUANT_PANEL_MIN_ROWS", kPanelMinRows)};
  return rows;
}

std::atomic<int64_t>& ymm_panel_min_rows() {
  static std::atomic<int64_t> rows{
      initial_min_rows("INGOT_QUANT_YMM_PANEL_MIN_ROWS", kYmmPanelMinRows)};
  return rows;
}

// The start table: Avx512 where the CPU runs it, else Avx2, else Scalar. AvxVnni is not
// a start table: on the one AVX-VNNI CPU measured (AMD Zen 5), its vpdpbusd kernel was
// level with or 3-10% slower than the maddubs one in decode (DRAM- and L3-resident
// weights, same bits either way; docs/quantization.md, "Kernel tables"), so the maddubs
// kernel stays the default until a CPU measures otherwise. set_quant_isa selects it.
QuantIsa best_isa() {
  for (QuantIsa isa : {QuantIsa::Avx512, QuantIsa::Avx2})
    if (quant_isa_supported(isa)) return isa;
  return QuantIsa::Scalar;
}

std::atomic<QuantIsa>& active_isa() {
  static std::atomic<QuantIsa> isa{best_isa()};
  return isa;
}

void check_layout(const PackedWeight& w) {
  INGOT_CHECK(w.bits == 8 || w.bits == 4, ValueError,
              "[quantized_matmul] bits must be 8 or 4, got {}", w.bits);
  INGOT_CHECK(w.group > 0 && w.k % w.group == 0, ValueError,
              "[quantized_matmul] group size {} must divide in_features {}", w.group, w.k);
  INGOT_CHECK(w.bits == 8 || w.group % 32 == 0, ValueError,
              "[quantized_matmul] 4-bit weights need a group size that is a multiple of 32, got {}",
              w.group);
}

}  // namespace

QuantIsa quant_isa() {
  return active_isa().load();
}

QuantIsa default_quant_isa() {
  return best_isa();
}

bool quant_isa_supported(QuantIsa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case QuantIsa::Scalar:
      return true;
    case QuantIsa::Avx2:
      return f.avx2_kernels();
    case QuantIsa::AvxVnni:
      return f.avx2_kernels() && f.avxvnni;
    case QuantIsa::Avx512:
      return f.avx512_kernels();
  }
  return false;
}

QuantIsa set_quant_isa(QuantIsa isa) {
  while (isa != QuantIsa::Scalar && !quant_isa_supported(isa))
    isa = static_cast<QuantIsa>(static_cast<int>(isa) - 1);
  active_isa().store(isa);
  return isa;
}

// Avx512 on a CPU without AVX512-VNNI keeps the AVX-512 f32 kernels and takes the maddubs
// ymm integer kernel (the zmm integer kernels need vpdpbusd; maddubs over AVX-VNNI as in
// best_isa).
Int8DotKernel int8_dot_kernel(QuantIsa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case QuantIsa::Scalar:
      return Int8DotKernel::Scalar;
    case QuantIsa::Avx2:
      return Int8DotKernel::Avx2Maddubs;
    case QuantIsa::AvxVnni:
      return Int8DotKernel::AvxVnniYmm;
    case QuantIsa::Avx512:
      return f.avx512vnni ? Int8DotKernel::Avx512VnniZmm : Int8DotKernel::Avx2Maddubs;
  }
  return Int8DotKernel::Scalar;
}

const char* int8_dot_kernel_name(Int8DotKernel k) {
  switch (k) {
    case Int8DotKernel::Scalar:
      return "scalar";
    case Int8DotKernel::Avx2Maddubs:
      return "avx2-maddubs";
    case Int8DotKernel::AvxVnniYmm:
      return "avxvnni-ymm";
    case Int8DotKernel::Avx512VnniZmm:
      return "avx512vnni-zmm";
  }
  return "?";
}

QuantActivations quant_activations() {
  return active_activations().load();
}

QuantActivations set_quant_activations(QuantActivations a) {
  return active_activations().exchange(a);
}

int64_t quant_panel_min_rows() {
  return panel_min_rows().load();
}

int64_t set_quant_panel_min_rows(int64_t rows) {
  INGOT_CHECK(rows >= 1, ValueError, "[set_quant_panel_min_rows] rows must be >= 1, got {}", rows);
  return panel_min_rows().exchange(rows);
}

int64_t quant_ymm_panel_min_rows() {
  return ymm_panel_min_rows().load();
}

int64_t set_quant_ymm_panel_min_rows(int64_t rows) {
  INGOT_CHECK(rows >= 1, ValueError, "[set_quant_ymm_panel_min_rows] rows must be >= 1, got {}",
              rows);
  return ymm_panel_min_rows().exchange(rows);
}

bool int8_activations_apply(const PackedWeight& w) {
  return detail::int8_activation_layout(w);
}

namespace {

void dequantize(QuantIsa isa, const PackedWeight& w, int64_t r0, int64_t r1, float* out) {
  if (isa == QuantIsa::Avx512)
    detail::dequantize_rows_avx512(w, r0, r1, out);
  else if (isa != QuantIsa::Scalar)  // Avx2, AvxVnni
    detail::dequantize_rows_avx2(w, r0, r1, out);
  else
    detail::dequantize_rows_scalar(w, r0, r1, out);
}

// Several weights that share x (quantized_matmul_siblings; one for quantized_matmul):
// output j is y[j] with rows ldy[j] apart. Their rows are treated as one concatenated
// range that the pool splits, so one fork / join and, per thread, one run of rows covers
// all of them.
struct Targets {
  std::span<const PackedWeight> w;
  std::span<float* const> y;
  std::span<const int64_t> ldy;

  int64_t rows() const {
    int64_t n = 0;
    for (const PackedWeight& wj : w) n += wj.n;
    return n;
  }
  // fn(j, lo, hi) for each weight j with local rows [lo, hi) inside concatenated [r0, r1).
  template <typename F>
  void for_each_part(int64_t r0, int64_t r1, F&& fn) const {
    int64_t offset = 0;
    for (size_t j = 0; j < w.size(); ++j) {
      const int64_t lo = std::max(r0, offset), hi = std::min(r1, offset + w[j].n);
      if (lo < hi) fn(j, lo - offset, hi - offset);
      offset += w[j].n;
    }
  }
};

// Int8 activations: quantise the x rows once, then per block of W rows every x row.
void int8_activation_matmul(const float* x, int64_t ldx, int64_t m, const Targets& t) {
  const Int8DotKernel kernel = int8_dot_kernel(quant_isa());
  const bool zmm = kernel == Int8DotKernel::Avx512VnniZmm;
  const bool ymm = kernel == Int8DotKernel::Avx2Maddubs || kernel == Int8DotKernel::AvxVnniYmm;
  const PackedWeight& w0 = t.w[0];
  // Prefill: the panel GEMM. The siblings share bits and zero points or their absence, so
  // one quantisation of x serves them all.
  if ((zmm && m >= quant_panel_min_rows()) || (ymm && m >= quant_ymm_panel_min_rows())) {
    thread_local detail::PanelActivations reused_panels;
    detail::PanelActivations& pa = reused_panels;
    if (zmm)
      detail::quantize_activation_panels(x, ldx, m, w0, pa);
    else
      detail::quantize_activation_panels_ymm(x, ldx, m, w0, pa);
    for (size_t j = 0; j < t.w.size(); ++j) {
      if (zmm)
        detail::int8act_gemm_vnni(pa, t.w[j], t.y[j], t.ldy[j]);
      else if (kernel == Int8DotKernel::Avx2Maddubs)
        detail::int8act_gemm_avx2(pa, t.w[j], t.y[j], t.ldy[j]);
      else
        detail::int8act_gemm_avxvnni(pa, t.w[j], t.y[j], t.ldy[j]);
    }
    return;
  }
  // Reused: no allocation per call once sized. (A reference, so that the pool's tasks read
  // this thread's buffers, not their own thread_local ones.)
  thread_local detail::Int8Activations reused;
  detail::Int8Activations& a = reused;
  detail::quantize_activations(x, ldx, m, w0.k, w0.bits, kernel != Int8DotKernel::Scalar, a);
  // One x row: the whole chunk at once (the VNNI kernel streams it as four sequences).
  const int64_t block = m == 1 ? t.rows() : kInt8BlockRows;
  parallel_for(0, t.rows(), kGemvGrain, [&](int64_t r0, int64_t r1) {
    t.for_each_part(r0, r1, [&](size_t j, int64_t lo, int64_t hi) {
      const PackedWeight& w = t.w[j];
      float* y = t.y[j];
      const int64_t ldy = t.ldy[j];
      // The ymm kernels visit every x row per W row themselves.
      if (kernel == Int8DotKernel::Avx2Maddubs)
        return detail::int8act_rows_avx2(a, w, lo, hi, y, ldy);
      if (kernel == Int8DotKernel::AvxVnniYmm)
        return detail::int8act_rows_avxvnni(a, w, lo, hi, y, ldy);
      for (int64_t b = lo; b < hi; b += block) {
        const int64_t e = std::min(hi, b + block);
        for (int64_t i = 0; i < m; ++i) {
          if (zmm)
            detail::int8act_rows_vnni(a, i, w, b, e, y + i * ldy);
          else
            detail::int8act_rows_scalar(a, i, w, b, e, y + i * ldy);
        }
      }
    });
  });
}

// f32 activations, decode-sized m: [m, k] x [n, k]^T, one pass over W per x row, the
// rows of W split over threads.
void float_stream_matmul(const float* x, int64_t ldx, int64_t m, const Targets& t) {
  const QuantIsa isa = quant_isa();
  const PackedWeight& w0 = t.w[0];
  thread_local std::vector<float> permuted;  // reused: no allocation per call once sized
  permuted.resize(isa != QuantIsa::Scalar && w0.bits == 4 ? size_t(w0.k) : 0);
  for (int64_t i = 0; i < m; ++i) {
    const float* xi = x + i * ldx;
    const float* xk = xi;  // what the vector kernels read (4-bit: permuted)
    if (!permuted.empty()) {
      detail::permute_int4_activations(xi, w0.k, permuted.data());
      xk = permuted.data();
    }
    parallel_for(0, t.rows(), kGemvGrain, [&](int64_t r0, int64_t r1) {
      t.for_each_part(r0, r1, [&](size_t j, int64_t lo, int64_t hi) {
        float* yi = t.y[j] + i * t.ldy[j];
        if (isa == QuantIsa::Avx512)
          detail::quantized_gemv_rows_avx512(xk, t.w[j], lo, hi, yi);
        else if (isa != QuantIsa::Scalar)  // Avx2, AvxVnni
          detail::quantized_gemv_rows_avx2(xk, t.w[j], lo, hi, yi);
        else
          detail::quantized_gemv_rows_scalar(xi, t.w[j], lo, hi, yi);
      });
    });
  }
}

// f32 activations, prefill: blocks of W rows dequantised to f32 [rows, k], then
// y[:, block] = x · block^T.
void float_block_matmul(const float* x, int64_t ldx, int64_t m, const PackedWeight& w, float* y,
                        int64_t ldy) {
  const QuantIsa isa = quant_isa();
  const int64_t blocks = (w.n + kBlockRows - 1) / kBlockRows;
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    std::vector<float> block(size_t(kBlockRows * w.k));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * kBlockRows, r1 = std::min(w.n, r0 + kBlockRows);
      dequantize(isa, w, r0, r1, block.data());
      GemmArgs g;
      g.m = m;
      g.n = r1 - r0;
      g.k = w.k;
      g.a = {x, DType::F32, ldx, 1};
      g.b = {block.data(), DType::F32, 1, w.k};  // B[k, n] = block[n, k]
      g.c = y + r0;
      g.c_dtype = DType::F32;
      g.ldc = ldy;
      gemm(g);  // inline: we are inside a pool task
    }
  });
}

void matmul_targets(const float* x, int64_t ldx, int64_t m, const Targets& t) {
  for (const PackedWeight& w : t.w) {
    check_layout(w);
    INGOT_CHECK(w.k == t.w[0].k && w.bits == t.w[0].bits && w.group == t.w[0].group &&
                    (w.zeros == nullptr) == (t.w[0].zeros == nullptr),
                ValueError,
                "[quantized_matmul_siblings] the weights must share in_features, bits, group "
                "size and zero points or their absence");
  }
  if (m == 0 || t.rows() == 0) return;
  if (quant_activations() == QuantActivations::Int8 && int8_activations_apply(t.w[0]))
    return int8_activation_matmul(x, ldx, m, t);
  if (m <= kMaxStreamRows) return float_stream_matmul(x, ldx, m, t);
  for (size_t j = 0; j < t.w.size(); ++j) float_block_matmul(x, ldx, m, t.w[j], t.y[j], t.ldy[j]);
}

}  // namespace

void dequantize_rows(const PackedWeight& w, int64_t r0, int64_t r1, float* out) {
  check_layout(w);
  dequantize(quant_isa(), w, r0, r1, out);
}

void quantized_matmul(const float* x, int64_t ldx, int64_t m, const PackedWeight& w, float* y,
                      int64_t ldy) {
  matmul_targets(x, ldx, m, Targets{{&w, 1}, {&y, 1}, {&ldy, 1}});
}

void quantized_matmul_siblings(const float* x, int64_t ldx, int64_t m,
                               std::span<const PackedWeight> w, std::span<float* const> y) {
  INGOT_CHECK(!w.empty() && w.size() == y.size() && w.size() <= kMaxSiblings, ValueError,
              "[quantized_matmul_siblings] 1 to {} weights with one output each, got {} and {}",
              kMaxSiblings, w.size(), y.size());
  int64_t ldy[kMaxSiblings];
  for (size_t j = 0; j < w.size(); ++j) ldy[j] = w[j].n;
  matmul_targets(x, ldx, m, Targets{w, y, {ldy, w.size()}});
}

}  // namespace ingot::cpu
