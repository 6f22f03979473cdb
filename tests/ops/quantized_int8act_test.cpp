// quantized_matmul with int8 activations (cpu::QuantActivations::Int8, the default): every
// table's integer kernel (avx2-maddubs, avxvnni-ymm: row kernels and the 8-row panel GEMM;
// avx512vnni-zmm per-row and panel GEMM; tables this CPU cannot run are skipped with the
// reason) against the portable int8
// kernel (their reference: the same integer sums, so they differ by f32 summation order
// only), the portable kernel against a double-precision reference of the scheme's
// definition and against the exact product within the activations' rounding bound, the
// layouts that fall back to the exact path, and the mode switch and its default.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "ingot/core/cpu_features.h"
#include "ingot/core/error.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/cpu/quantized_gemv_internal.h"

namespace ingot::cpu {
namespace {

struct Case {
  int bits;
  int64_t group;  // 0: per row (k)
  bool zeros;
  int64_t k;
};

struct Problem {
  int64_t n = 0, m = 0, k = 0;
  std::vector<float> w, x;
  PackedBuffers p;
  PackedWeight pw;
};

bool has_vnni() {
  return cpu_features().avx512_kernels() && cpu_features().avx512vnni;
}

// n = 37 rows: four-row blocks, 8-row tiles and a remainder, one thread chunk.
Problem make(const Case& c, int64_t m, uint32_t seed, int64_t n = 37) {
  Problem pr;
  pr.n = n, pr.m = m, pr.k = c.k;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  pr.w.resize(size_t(pr.n * c.k));
  pr.x.resize(size_t(m * c.k));
  for (float& f : pr.w) f = u(rng);
  for (float& f : pr.x) f = u(rng) * (u(rng) > 0.9f ? 8.0f : 1.0f);  // some outliers
  const int64_t g = c.group ? c.group : c.k;
  pr.p = quantize_weight(pr.w.data(), pr.n, c.k, c.bits, g, c.zeros);
  pr.pw = {pr.p.q.data(),
           pr.p.scales.data(),
           c.zeros ? pr.p.zeros.data() : nullptr,
           c.bits,
           pr.n,
           c.k,
           g};
  return pr;
}

std::vector<float> run(const Problem& pr, QuantActivations act, QuantIsa isa) {
  ScopedQuantActivations mode(act);
  set_quant_isa(isa);
  std::vector<float> y(size_t(pr.m * pr.n), NAN);
  quantized_matmul(pr.x.data(), pr.k, pr.m, pr.pw, y.data(), pr.n);
  set_quant_isa(default_quant_isa());
  return y;
}

int weight_value(const PackedWeight& w, int64_t r, int64_t c) {
  return w.bits == 8 ? w.q[r * w.k + c] : (w.q[r * w.k / 2 + c / 2] >> (4 * (c & 1))) & 15;
}

// The scheme's definition in double: q_x = round(x / d) per 32-block (d = max|x| / 127),
// y = sum (w_q - z) * s_w * q_x * d. Also returns the exact product and the rounding
// bound sum |W_deq| * d / 2 per output.
struct Reference {
  std::vector<double> int8act, exact, bound;
};

Reference reference(const Problem& pr) {
  const PackedWeight& w = pr.pw;
  Reference ref;
  for (int64_t i = 0; i < pr.m; ++i) {
    const float* x = pr.x.data() + i * pr.k;
    std::vector<double> q(size_t(pr.k)), d(size_t(pr.k));
    for (int64_t c0 = 0; c0 < pr.k; c0 += 32) {
      const int64_t c1 = std::min(pr.k, c0 + 32);
      float amax = 0;
      for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[c]));
      const float s = amax / 127.0f, inv = s != 0 ? 1.0f / s : 0.0f;
      for (int64_t c = c0; c < c1; ++c) {
        q[size_t(c)] = std::nearbyint(x[c] * inv);
        d[size_t(c)] = s;
      }
    }
    for (int64_t r = 0; r < w.n; ++r) {
      double a = 0, e = 0, b = 0;
      for (int64_t c = 0; c < pr.k; ++c) {
        const int64_t g = c / w.group;
        const double wd =
            double(weight_value(w, r, c) - w.zero(r, g)) * w.scales[r * w.groups() + g];
        a += wd * q[size_t(c)] * d[size_t(c)];
        e += wd * x[c];
        b += std::abs(wd) * d[size_t(c)] * 0.5;
      }
      ref.int8act.push_back(a);
      ref.exact.push_back(e);
      ref.bound.push_back(b);
    }
  }
  return ref;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

const char* isa_name(QuantIsa isa) {
  switch (isa) {
    case QuantIsa::Scalar:
      return "Scalar";
    case QuantIsa::Avx2:
      return "Avx2";
    case QuantIsa::AvxVnni:
      return "AvxVnni";
    case QuantIsa::Avx512:
      return "Avx512";
  }
  return "?";
}

// Skips (with the reason printed) a table this CPU cannot run natively.
#define SKIP_UNLESS_SUPPORTED(isa)                                                          \
  if (!quant_isa_supported(isa))                                                            \
  GTEST_SKIP() << "this CPU (after INGOT_ISA) cannot run the " << isa_name(isa)             \
               << " table's integer kernel (" << int8_dot_kernel_name(int8_dot_kernel(isa)) \
               << "), so it is not tested here"

class Int8Activations : public ::testing::TestWithParam<std::tuple<Case, int64_t, QuantIsa>> {};

// The portable kernel computes the scheme's definition and stays within the activations'
// rounding bound of the exact product; every vector kernel (avx2-maddubs, avxvnni-ymm: the
// row kernels below 7 rows, the 8-row panel GEMM from 7; avx512vnni-zmm: the per-row kernel
// below 5 rows, the panel GEMM from 5) equals it up to f32 summation order, and the two ymm
// kernels (same integer sums, same order) equal each other bit for bit.
TEST_P(Int8Activations, KernelsMatchReference) {
  const auto [c, m, isa] = GetParam();
  SKIP_UNLESS_SUPPORTED(isa);
  const Problem pr = make(c, m, uint32_t(c.k + m));
  const Reference ref = reference(pr);
  const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
  const double scale = max_abs(ref.int8act);
  if (isa == QuantIsa::Scalar) {
    for (size_t j = 0; j < scalar.size(); ++j) {
      EXPECT_NEAR(scalar[j], ref.int8act[j], 2e-6 * scale) << "output " << j;
      EXPECT_LE(std::abs(scalar[j] - ref.exact[j]), ref.bound[j] * 1.0001 + 2e-6 * scale)
          << "output " << j;
    }
    return;
  }
  const std::vector<float> got = run(pr, QuantActivations::Int8, isa);
  const char* kernel = int8_dot_kernel_name(int8_dot_kernel(isa));
  for (size_t j = 0; j < got.size(); ++j)
    EXPECT_NEAR(got[j], scalar[j], 2e-6 * scale) << kernel << " output " << j;
  if (isa == QuantIsa::AvxVnni) {
    EXPECT_EQ(got, run(pr, QuantActivations::Int8, QuantIsa::Avx2))
        << "avxvnni-ymm and avx2-maddubs sum the same integers in the same order";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, Int8Activations,
    ::testing::Combine(
        ::testing::Values(Case{8, 0, false, 1024}, Case{8, 0, false, 200},  // 200: tails
                          Case{8, 0, false, 30}, Case{4, 32, false, 256},
                          Case{4, 32, false, 224},  // a 96-weight tail chunk
                          Case{4, 32, true, 160}, Case{4, 64, true, 192}, Case{4, 64, false, 320},
                          Case{4, 128, false, 384}, Case{4, 128, true, 256},
                          // longer G 32 rows: two runs of four decode steps,
                          // then one step (576); with zero points and a
                          // short last step (544)
                          Case{4, 32, false, 576}, Case{4, 32, true, 544},
                          // int8 in groups (a GGUF's Q8_0 is G 32): whole 64-weight zmm
                          // chunks (576), a 32-weight last chunk (224), G 64 (one group
                          // per chunk), G 96 (groups across chunks)
                          Case{8, 32, false, 576}, Case{8, 32, false, 224}, Case{8, 64, false, 320},
                          Case{8, 96, false, 288}),
        // zmm: m < 5 the per-row kernel, from 5 the panel GEMM (one panel up
        // to 16 rows, pairs of panels and a padded last panel beyond); ymm:
        // m < 7 the row kernels, from 7 the 8-row panel GEMM
        ::testing::Values(int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(7), int64_t(16),
                          int64_t(17), int64_t(64), int64_t(130)),
        ::testing::Values(QuantIsa::Scalar, QuantIsa::Avx2, QuantIsa::AvxVnni, QuantIsa::Avx512)));

// Each table runs its own integer kernel; a request above what the CPU runs lands on the
// highest table below it that it does run.
TEST(Int8ActivationsTables, KernelPerTable) {
  EXPECT_EQ(int8_dot_kernel(QuantIsa::Scalar), Int8DotKernel::Scalar);
  EXPECT_EQ(int8_dot_kernel(QuantIsa::Avx2), Int8DotKernel::Avx2Maddubs);
  EXPECT_EQ(int8_dot_kernel(QuantIsa::AvxVnni), Int8DotKernel::AvxVnniYmm);
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(int8_dot_kernel(QuantIsa::Avx512),
            f.avx512vnni ? Int8DotKernel::Avx512VnniZmm : Int8DotKernel::Avx2Maddubs);
  EXPECT_STREQ(int8_dot_kernel_name(Int8DotKernel::AvxVnniYmm), "avxvnni-ymm");
  // The start table: the widest of Avx512 / Avx2 / Scalar the CPU runs, never AvxVnni
  // (its kernel measured no faster than maddubs).
  const QuantIsa start = default_quant_isa();
  EXPECT_TRUE(quant_isa_supported(start));
  EXPECT_NE(start, QuantIsa::AvxVnni);
  EXPECT_EQ(start, f.avx512_kernels() ? QuantIsa::Avx512
                   : f.avx2_kernels() ? QuantIsa::Avx2
                                      : QuantIsa::Scalar);
  const QuantIsa before = quant_isa();
  for (QuantIsa isa : {QuantIsa::Scalar, QuantIsa::Avx2, QuantIsa::AvxVnni, QuantIsa::Avx512}) {
    const QuantIsa got = set_quant_isa(isa);
    EXPECT_LE(int(got), int(isa));
    EXPECT_TRUE(quant_isa_supported(got));
    EXPECT_EQ(quant_isa(), got);
    if (quant_isa_supported(isa)) {
      EXPECT_EQ(got, isa);
    }
  }
  set_quant_isa(before);
  EXPECT_EQ(quant_isa(), before);
}

// The panel GEMM over many W rows: split over the pool's threads, 32-row blocks and
// 8 / 4-row tiles with remainders (301 rows), k in several 1024-weight passes with a
// short last one (int8 k 2100; int4 g32 / g128 k 1152), against the portable kernel.
TEST(Int8ActivationsPanel, ThreadedMatchesPortable) {
  if (!has_vnni()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  for (const Case& c : {Case{8, 0, false, 2100}, Case{8, 32, false, 1152}, Case{4, 32, true, 1152},
                        Case{4, 128, false, 1152}})
    for (int64_t m : {int64_t(6), int64_t(16), int64_t(48)}) {
      const Problem pr = make(c, m, uint32_t(m), 301);
      const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
      const std::vector<float> vnni = run(pr, QuantActivations::Int8, QuantIsa::Avx512);
      double scale = 0;
      for (float v : scalar) scale = std::max(scale, double(std::abs(v)));
      for (size_t j = 0; j < vnni.size(); ++j)
        ASSERT_NEAR(vnni[j], scalar[j], 2e-6 * scale)
            << "bits " << c.bits << " k " << c.k << " m " << m << " output " << j;
    }
  if (num_threads() < 2) GTEST_LOG_(INFO) << "one thread: the split over threads was not run";
}

// Below the crossover the per-row kernel runs; with the threshold lowered to 1 the panel
// GEMM takes m = 1 and 3 too (one partly filled panel), with the same sums.
TEST(Int8ActivationsPanel, ThresholdSelectsKernelSameSums) {
  if (!has_vnni()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  EXPECT_THROW(set_quant_panel_min_rows(0), ValueError);
  for (const Case& c : {Case{8, 0, false, 200}, Case{4, 64, true, 192}})
    for (int64_t m : {int64_t(1), int64_t(3), int64_t(16)}) {
      const Problem pr = make(c, m, uint32_t(7 * m));
      const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
      double scale = 0;
      for (float v : scalar) scale = std::max(scale, double(std::abs(v)));
      for (int64_t threshold : {int64_t(1), int64_t(1) << 40}) {
        const int64_t before = set_quant_panel_min_rows(threshold);
        const std::vector<float> vnni = run(pr, QuantActivations::Int8, QuantIsa::Avx512);
        EXPECT_EQ(set_quant_panel_min_rows(before), threshold);
        for (size_t j = 0; j < vnni.size(); ++j)
          ASSERT_NEAR(vnni[j], scalar[j], 2e-6 * scale)
              << "bits " << c.bits << " m " << m << " threshold " << threshold << " output " << j;
      }
    }
}

// The panel layout holds quantize_activations' values bit for bit, for both lane widths
// (16: AVX512-VNNI, 8: the ymm tables): every q at its (panel, step, lane, byte) position
// (4-bit: each 32-block in even-odd order), zeros in the padding, the block scales, and the
// zero-point terms.
TEST(Int8ActivationsPanel, LayoutHoldsPortableValues) {
  for (const int lanes : {16, 8}) {
    if (lanes == 16 && !has_vnni()) {
      GTEST_LOG_(INFO) << "this CPU has no AVX512-VNNI: the 16-lane layout is not tested";
      continue;
    }
    if (lanes == 8 && !cpu_features().avx2_kernels()) {
      GTEST_LOG_(INFO) << "this CPU has no AVX2: the 8-lane layout is not tested";
      continue;
    }
    for (const Case& c : {Case{8, 0, false, 200}, Case{4, 32, false, 96}, Case{4, 64, true, 128}}) {
      const int64_t m = 19;
      const Problem pr = make(c, m, 3);
      detail::Int8Activations ref;
      detail::quantize_activations(pr.x.data(), pr.k, m, pr.k, c.bits, false, ref);
      detail::PanelActivations pa;
      if (lanes == 16)
        detail::quantize_activation_panels(pr.x.data(), pr.k, m, pr.pw, pa);
      else
        detail::quantize_activation_panels_ymm(pr.x.data(), pr.k, m, pr.pw, pa);
      ASSERT_EQ(pa.lanes, lanes);
      ASSERT_EQ(pa.panels, (m + lanes - 1) / lanes);
      ASSERT_EQ(pa.blocks, (c.k + 31) / 32);
      const int32_t factor = c.zeros ? -1 : -(1 << (c.bits - 1));
      for (int64_t i = 0; i < pa.panels * lanes; ++i)
        for (int64_t b = 0; b < pa.blocks; ++b) {
          int32_t sum = 0;
          for (int64_t j = 0; j < 32; ++j) {
            const int64_t e = c.bits == 4 ? (j < 16 ? 2 * j : 2 * (j - 16) + 1) : j;
            const int64_t col = 32 * b + e;
            const int8_t want = i < m && col < pr.k ? ref.q[size_t(i * pr.k + col)] : int8_t(0);
            const int64_t t = 8 * b + j / 4;
            const int8_t got =
                pa.q[size_t((i / lanes) * pa.panel_bytes() + (t * lanes + i % lanes) * 4 + j % 4)];
            ASSERT_EQ(got, want) << lanes << " lanes, row " << i << " block " << b << " position "
                                 << j;
            sum += want;
          }
          const size_t at = size_t(((i / lanes) * pa.blocks + b) * lanes + i % lanes);
          EXPECT_EQ(pa.scales[at], i < m ? ref.block_scales[size_t(i * pa.blocks + b)] : 0.0f)
              << lanes << " lanes, row " << i << " block " << b;
          EXPECT_EQ(pa.corr[at], factor * sum) << lanes << " lanes, row " << i << " block " << b;
        }
    }
  }
}

// The ymm tables' panel GEMM (quantized_gemm_ymm.h: avx2-maddubs, avxvnni-ymm; 8 x rows per
// ymm), forced from m = 1 (set_quant_ymm_panel_min_rows), against the portable kernel on
// every mode (int8 per row with k % 32 != 0 and k < 32, int4 G 32 / 64 / 128 with and
// without zero points) and m around the panel boundaries (1..40: one partly filled panel,
// whole panels, pairs of panels and a last single one); the two compiles sum the same
// integers in the same f32 order, so they give the same bits. A table this CPU cannot run
// is skipped with the reason (on a CPU without AVX-VNNI the avxvnni compile is built, not
// run).
TEST(Int8ActivationsYmmPanel, MatchesPortableAcrossPanelBoundaries) {
  for (const QuantIsa isa : {QuantIsa::Avx2, QuantIsa::AvxVnni}) {
    if (!quant_isa_supported(isa)) {
      GTEST_LOG_(INFO) << "this CPU (after INGOT_ISA) cannot run the " << isa_name(isa)
                       << " table (" << int8_dot_kernel_name(int8_dot_kernel(isa))
                       << "): its panel GEMM is not tested here";
      continue;
    }
    const int64_t before = set_quant_ymm_panel_min_rows(1);
    for (const Case& c : {Case{8, 0, false, 200}, Case{8, 0, false, 30}, Case{8, 0, false, 1024},
                          Case{4, 32, false, 224}, Case{4, 32, true, 544}, Case{4, 64, true, 192},
                          Case{4, 128, false, 384}, Case{8, 32, false, 224}})
      for (int64_t m : {1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40}) {
        const Problem pr = make(c, m, uint32_t(c.k * 3 + m));
        const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
        const std::vector<float> got = run(pr, QuantActivations::Int8, isa);
        double scale = 0;
        for (float v : scalar) scale = std::max(scale, double(std::abs(v)));
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_NEAR(got[j], scalar[j], 2e-6 * scale)
              << isa_name(isa) << " bits " << c.bits << " group " << c.group << " zeros " << c.zeros
              << " k " << c.k << " m " << m << " output " << j;
        if (isa == QuantIsa::AvxVnni) {
          ASSERT_EQ(got, run(pr, QuantActivations::Int8, QuantIsa::Avx2))
              << "the avxvnni and avx2 panel GEMMs sum the same integers in the same order";
        }
      }
    set_quant_ymm_panel_min_rows(before);
  }
}

// The ymm panel GEMM over many W rows: split over the pool's threads, 32-row blocks and
// 4 / 2-row tiles with remainders (301 rows), k in several 1024-weight passes with a short
// last one (int8 k 2100, also not a multiple of 32; int4 k 1152), against the portable
// kernel.
TEST(Int8ActivationsYmmPanel, ThreadedMatchesPortable) {
  if (!quant_isa_supported(QuantIsa::Avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  for (const Case& c : {Case{8, 0, false, 2100}, Case{8, 32, false, 1152}, Case{4, 32, true, 1152},
                        Case{4, 128, false, 1152}})
    for (int64_t m : {int64_t(7), int64_t(16), int64_t(41)}) {
      const Problem pr = make(c, m, uint32_t(m), 301);
      const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
      const std::vector<float> got = run(pr, QuantActivations::Int8, QuantIsa::Avx2);
      double scale = 0;
      for (float v : scalar) scale = std::max(scale, double(std::abs(v)));
      for (size_t j = 0; j < got.size(); ++j)
        ASSERT_NEAR(got[j], scalar[j], 2e-6 * scale)
            << "bits " << c.bits << " k " << c.k << " m " << m << " output " << j;
    }
  if (num_threads() < 2) GTEST_LOG_(INFO) << "one thread: the split over threads was not run";
}

// The ymm threshold: the measured crossover by default (7 rows), at least 1; below it the
// row kernels run, from it the panel GEMM, with the same sums up to f32 order.
TEST(Int8ActivationsYmmPanel, ThresholdSelectsKernelSameSums) {
  EXPECT_THROW(set_quant_ymm_panel_min_rows(0), ValueError);
  const char* env = std::getenv("INGOT_QUANT_YMM_PANEL_MIN_ROWS");
  if (!env || !*env) {
    EXPECT_EQ(quant_ymm_panel_min_rows(), 7);
  }
  if (!quant_isa_supported(QuantIsa::Avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  for (const Case& c : {Case{8, 0, false, 200}, Case{4, 64, true, 192}})
    for (int64_t m : {int64_t(3), int64_t(7), int64_t(16)}) {
      const Problem pr = make(c, m, uint32_t(5 * m));
      const std::vector<float> scalar = run(pr, QuantActivations::Int8, QuantIsa::Scalar);
      double scale = 0;
      for (float v : scalar) scale = std::max(scale, double(std::abs(v)));
      for (int64_t threshold : {int64_t(1), int64_t(1) << 40}) {
        const int64_t before = set_quant_ymm_panel_min_rows(threshold);
        const std::vector<float> got = run(pr, QuantActivations::Int8, QuantIsa::Avx2);
        EXPECT_EQ(set_quant_ymm_panel_min_rows(before), threshold);
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_NEAR(got[j], scalar[j], 2e-6 * scale)
              << "bits " << c.bits << " m " << m << " threshold " << threshold << " output " << j;
      }
    }
}

// The AVX2 activation quantiser gives the scalar one's q and scales bit for bit: random
// rows with outliers, exact .5 ties of x / d (round half to even), all-zero blocks, values
// past the clamp's reach, and k not a multiple of 32 (the short last block).
TEST(Int8ActivationsQuantizer, Avx2EqualsScalar) {
  if (!cpu_features().avx2_kernels()) GTEST_SKIP() << "this CPU has no AVX2";
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t k : {32, 96, 1024, 1000, 7}) {
    std::vector<float> x(static_cast<size_t>(k));
    for (float& f : x) f = u(rng) * (u(rng) > 0.9f ? 50.0f : 1.0f);
    // Block 0: max 127 so d = 1 and x / d = x: the halves are ties (2.5 -> 2, 3.5 -> 4).
    const float ties[] = {127.0f, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 126.5f, -126.5f};
    for (size_t i = 0; i < std::size(ties) && i < x.size(); ++i) x[i] = ties[i];
    if (k >= 64) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);  // block 1: all zero
    const int64_t blocks = (k + 31) / 32;
    std::vector<int8_t> q_ref(static_cast<size_t>(k)), q_avx2(static_cast<size_t>(k));
    std::vector<float> s_ref(static_cast<size_t>(blocks)), s_avx2(static_cast<size_t>(blocks));
    detail::quantize_row_scalar(x.data(), k, q_ref.data(), s_ref.data());
    detail::quantize_row_avx2(x.data(), k, q_avx2.data(), s_avx2.data());
    EXPECT_EQ(q_avx2, q_ref) << "k " << k;
    EXPECT_EQ(s_avx2, s_ref) << "k " << k;
    if (k >= 8) {  // the ties rounded to even
      EXPECT_EQ(q_ref[1], 2);
      EXPECT_EQ(q_ref[2], 4);
      EXPECT_EQ(q_ref[3], -2);
      EXPECT_EQ(q_ref[6], 126);
    }
  }
}

// Layouts the int8 kernels do not cover (8-bit with zero points, or groups that are not
// whole 32-blocks) run the exact path in Int8 mode: bit-identical to Float mode.
TEST(Int8ActivationsFallback, UncoveredLayoutsRunExact) {
  Problem pr = make(Case{8, 0, false, 128}, 2, 5);
  std::vector<uint8_t> zeros(size_t(pr.n * 2), 128);
  std::vector<float> scales(size_t(pr.n * 8));
  for (int64_t r = 0; r < pr.n; ++r)
    for (int64_t g = 0; g < 8; ++g) scales[size_t(8 * r + g)] = pr.p.scales[size_t(r)];
  pr.pw.zeros = zeros.data();
  EXPECT_FALSE(int8_activations_apply(pr.pw));
  EXPECT_EQ(run(pr, QuantActivations::Int8, QuantIsa::Avx512),
            run(pr, QuantActivations::Float, QuantIsa::Avx512));
  pr.pw.zeros = nullptr;
  pr.pw.scales = scales.data();
  pr.pw.group = 16;  // eight groups per row, two per 32-block of x
  EXPECT_FALSE(int8_activations_apply(pr.pw));
  EXPECT_EQ(run(pr, QuantActivations::Int8, QuantIsa::Avx512),
            run(pr, QuantActivations::Float, QuantIsa::Avx512));
}

// Int8 activations are the default (the fast path every entry point gets);
// INGOT_QUANT_ACTIVATIONS=float opts out.
TEST(Int8ActivationsMode, DefaultIsInt8) {
  const char* env = std::getenv("INGOT_QUANT_ACTIVATIONS");
  if (env && *env) GTEST_SKIP() << "INGOT_QUANT_ACTIVATIONS=" << env << " sets the start value";
  EXPECT_EQ(quant_activations(), QuantActivations::Int8);
}

// The mode is process-wide and scoped; Float is the exact path.
TEST(Int8ActivationsMode, ScopedSwitchRestores) {
  const QuantActivations before = quant_activations();
  {
    ScopedQuantActivations a(QuantActivations::Int8);
    EXPECT_EQ(quant_activations(), QuantActivations::Int8);
    {
      ScopedQuantActivations b(QuantActivations::Float);
      EXPECT_EQ(quant_activations(), QuantActivations::Float);
    }
    EXPECT_EQ(quant_activations(), QuantActivations::Int8);
  }
  EXPECT_EQ(quant_activations(), before);
  // Int8 mode differs from the exact result (it quantises x), Float does not.
  const Problem pr = make(Case{4, 32, false, 256}, 1, 9);
  const Reference ref = reference(pr);
  const std::vector<float> f = run(pr, QuantActivations::Float, QuantIsa::Avx512);
  const std::vector<float> q = run(pr, QuantActivations::Int8, QuantIsa::Avx512);
  double df = 0, dq = 0;
  for (size_t j = 0; j < f.size(); ++j) {
    df = std::max(df, std::abs(f[j] - ref.exact[j]));
    dq = std::max(dq, std::abs(q[j] - ref.exact[j]));
  }
  EXPECT_LT(df, 1e-5 * max_abs(ref.exact));
  EXPECT_GT(dq, 1e-5 * max_abs(ref.exact));
}

}  // namespace
}  // namespace ingot::cpu
