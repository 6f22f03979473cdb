// f32 linears on weights packed once as the GEMM's panels (ops/cpu/gemm.h PanelWeight,
// ops/packed_linear.cpp): the panel layout element by element, cpu::gemm_panels against a
// double-precision reference at every m route (the panel GEMV up to four rows, the
// blocked kernels above) and every ISA (panels of another table's width take the
// per-panel fallback), ingot::packed_linear against linear with a bias and batch dims,
// its decomposition against its kernel, and bad arguments.
//
// Tolerance: as gemm_test.cpp, |err| <= 1e-5 * sqrt(k) for |x|, |w| <= 1 (f32 sums of
// length k in another order than the reference's).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::random_tensor;
using testing::values;

// The width the fast path reads, or the AVX2 table's 16 on a CPU whose kernels have none
// (the per-panel fallback is then what runs).
int64_t panel_width() {
  const int64_t w = cpu::gemm_panel_width();
  return w > 0 ? w : 16;
}

std::vector<cpu::GemmIsa> isas() {
  std::vector<cpu::GemmIsa> out;
  for (cpu::GemmIsa i : {cpu::GemmIsa::Scalar, cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512})
    if (i <= cpu::best_supported_gemm_isa()) out.push_back(i);
  return out;
}

class PackedLinear : public ::testing::Test {
 protected:
  void TearDown() override { cpu::set_gemm_isa(cpu::best_supported_gemm_isa()); }
  std::mt19937 rng{2024};
};

// data[(q * k + p) * width + r] = W[q * width + r, p]; rows past n are zero.
TEST_F(PackedLinear, PanelLayout) {
  for (const int64_t width : {int64_t(4), int64_t(16), panel_width()}) {
    const Tensor w = random_tensor({37, 13}, DType::F32, rng);
    const Tensor panels = pack_linear_weight(w, width);
    const int64_t count = (37 + width - 1) / width;
    ASSERT_EQ(panels.sizes(), (IntShape{count, 13, width}));
    const std::vector<double> wv = values(w), pv = values(panels);
    for (int64_t q = 0; q < count; ++q)
      for (int64_t p = 0; p < 13; ++p)
        for (int64_t r = 0; r < width; ++r) {
          const int64_t row = q * width + r;
          ASSERT_EQ(pv[size_t((q * 13 + p) * width + r)], row < 37 ? wv[size_t(row * 13 + p)] : 0.0)
              << "width " << width << " panel " << q << " k " << p << " lane " << r;
        }
  }
}

// gemm_panels == x · W^T (+ y when beta is 1) for every m route, ragged n and k (130 x
// 600 rows of A exceed the 256 KiB under which the whole k is one block), and every ISA;
// the panels are packed once at the default ISA's width.
TEST_F(PackedLinear, GemmPanelsMatchesReference) {
  const int64_t width = panel_width();
  for (const int64_t n : {int64_t(16), int64_t(37), int64_t(300)})
    for (const int64_t k : {int64_t(1), int64_t(13), int64_t(300), int64_t(600)}) {
      const Tensor w = random_tensor({n, k}, DType::F32, rng);
      const Tensor panels = pack_linear_weight(w, width);
      const cpu::PanelWeight pw{panels.data<float>(), n, k, width};
      const std::vector<double> wv = values(w);
      for (const int64_t m : {1, 2, 3, 4, 5, 16, 37, 130}) {
        const Tensor x = random_tensor({m, k}, DType::F32, rng);
        const std::vector<double> xv = values(x);
        for (const float beta : {0.0f, 1.0f}) {
          const Tensor y0 = random_tensor({m, n}, DType::F32, rng);
          const std::vector<double> y0v = values(y0);
          for (const cpu::GemmIsa isa : isas()) {
            cpu::set_gemm_isa(isa);
            Tensor y = contiguous(clone(y0));
            cpu::gemm_panels(m, x.data<float>(), k, pw, y.data<float>(), n, beta);
            const std::vector<double> yv = values(y);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double want = beta * y0v[size_t(i * n + j)];
                for (int64_t p = 0; p < k; ++p)
                  want += xv[size_t(i * k + p)] * wv[size_t(j * k + p)];
                ASSERT_NEAR(yv[size_t(i * n + j)], want, 1e-5 * std::sqrt(double(k)) + 1e-6)
                    << cpu::gemm_isa_name(isa) << " m=" << m << " n=" << n << " k=" << k
                    << " beta=" << beta << " at (" << i << ", " << j << ")";
              }
          }
        }
      }
    }
}

// The op equals linear with a bias and batch dims, for decode (one row) and prefill rows;
// its decomposition (what a backend without the kernel runs) equals the kernel.
TEST_F(PackedLinear, OpEqualsLinearAndItsDecomposition) {
  const Tensor w = random_tensor({70, 96}, DType::F32, rng);
  const Tensor bias = random_tensor({70}, DType::F32, rng);
  const Tensor panels = pack_linear_weight(w, panel_width());
  const OpDef& op = OpRegistry::instance().get("ingot::packed_linear");
  for (const IntShape& xs : {IntShape{1, 1, 96}, IntShape{2, 9, 96}, IntShape{96}}) {
    const Tensor x = random_tensor(xs, DType::F32, rng);
    for (const bool with_bias : {false, true}) {
      const Tensor b = with_bias ? bias : Tensor();
      const Tensor want = linear(x, w, b);
      const Tensor got = packed_linear(x, panels, b, 70);
      ASSERT_EQ(got.sizes(), want.sizes());
      testing::expect_close(got, values(want), 1e-4, 1e-5, "packed_linear");
      std::vector<Value> args = {x, panels, with_bias ? Value(bias) : Value(), int64_t(70)};
      const Tensor decomposed = op.decomposition_fn(normalize_args(op, args))[0];
      testing::expect_close(decomposed, values(got), 1e-4, 1e-5, "decomposition");
    }
  }
}

TEST_F(PackedLinear, RejectsBadArguments) {
  const Tensor w = random_tensor({40, 8}, DType::F32, rng);
  const Tensor panels = pack_linear_weight(w, 16);  // [3, 8, 16]
  const Tensor x = random_tensor({2, 8}, DType::F32, rng);
  EXPECT_THROW(
      {
        try {
          packed_linear(x, panels, Tensor(), 49);  // 3 panels of 16 hold 33..48 rows
        } catch (const ShapeError& e) {
          EXPECT_NE(std::string(e.what()).find("out_features 49"), std::string::npos) << e.what();
          throw;
        }
      },
      ShapeError);
  EXPECT_THROW(packed_linear(random_tensor({2, 9}, DType::F32, rng), panels, Tensor(), 40),
               ShapeError);
  EXPECT_THROW(packed_linear(to(x, DType::BF16), panels, Tensor(), 40), DTypeError);
  EXPECT_THROW(packed_linear(x, panels, random_tensor({39}, DType::F32, rng), 40), ShapeError);
  EXPECT_THROW(pack_linear_weight(random_tensor({4, 4, 4}, DType::F32, rng), 16), DTypeError);
  EXPECT_THROW(pack_linear_weight(w, 0), ValueError);
}

}  // namespace
}  // namespace ingot
