// SiLU through cpu::silu_mul (the vectorised path of the silu op for contiguous tensors)
// and the fused ingot::silu_mul(gate, up): against a double reference computed once and
// rounded once, at lengths that exercise the 16-lane tails and the threaded split, for
// float32 and bfloat16; special values as torch; errors name the operand.
#include <cmath>
#include <limits>
#include <random>

#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/functional/fused.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

double silu_ref(double g) {
  return g / (1.0 + std::exp(-g));
}

// Inputs spread over [-12, 12] (the range a gated MLP sees, and beyond where sigmoid
// saturates) plus a few far out.
Tensor gate_values(int64_t n, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-12, 12);
  return testing::make_tensor({n}, dtype, [&](int64_t i) {
    if (i % 97 == 5) return -95.0;  // exp(-g) overflows
    if (i % 89 == 7) return 95.0;
    return u(rng);
  });
}

// |got - want| within `ulps` units of the last place of `dtype` at want's magnitude.
void expect_within_ulps(const std::vector<double>& got, const std::vector<double>& want,
                        DType dtype, double ulps, const std::string& what) {
  const double eps = dtype == DType::BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -23);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = ulps * eps * std::max(std::abs(want[i]), 1e-30);
    ASSERT_LE(std::abs(got[i] - want[i]), tol)
        << what << " element " << i << ": got " << got[i] << " want " << want[i];
  }
}

TEST(SiluMul, SiluEqualsTheReferenceAtEveryLength) {
  // 1..40 cover the masked tails of 16 lanes; 100003 is split over the thread pool.
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (int64_t n : {1, 7, 15, 16, 17, 31, 33, 40, 100003}) {
      const Tensor g = gate_values(n, dtype, uint32_t(n));
      std::vector<double> want;
      for (double v : values(g)) want.push_back(silu_ref(v));
      // f32: the vector exp's ~2 ulp plus the division's rounding; bf16: one rounding of
      // a float result that is itself a few float ulps off (so at most one bf16 step at a
      // rounding boundary).
      expect_within_ulps(
          values(silu(g)), want, dtype, dtype == DType::F32 ? 4 : 1,
          std::string("silu ") + std::string(dtype_name(dtype)) + " n=" + std::to_string(n));
    }
  }
}

TEST(SiluMul, FusedEqualsSiluTimesUpRoundedOnce) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (int64_t n : {3, 16, 29, 65536 + 11}) {
      const Tensor g = gate_values(n, dtype, 11);
      std::mt19937 rng(7);
      const Tensor u = testing::random_tensor({n}, dtype, rng);
      std::vector<double> want;
      const std::vector<double> gv = values(g), uv = values(u);
      for (size_t i = 0; i < gv.size(); ++i) want.push_back(silu_ref(gv[i]) * uv[i]);
      expect_within_ulps(values(silu_mul(g, u)), want, dtype, dtype == DType::F32 ? 5 : 1,
                         std::string("silu_mul ") + std::string(dtype_name(dtype)));
    }
  }
}

// The AVX2 kernels called directly (silu_mul prefers AVX-512 where present, so this covers
// them on every machine with AVX2), with and without up, at every tail length and at
// Qwen3-0.6B's MLP width: the bounds above, special values as torch, and nothing
// written past element n.
TEST(SiluMul, Avx2KernelsMatchTheReference) {
  if (!cpu::activation::avx2_available()) GTEST_SKIP() << "no AVX2 + FMA + F16C";
  const float inf = std::numeric_limits<float>::infinity();
  constexpr float kSentinel = 1234.5f;
  for (int64_t n = 1; n <= 3072 + 5; n = n < 40 ? n + 1 : n == 40 ? 3072 : n + 5) {
    std::vector<double> gv = values(gate_values(n, DType::F32, uint32_t(n)));
    const std::vector<double> specials = {-inf, -100.0, inf, std::nan(""), -0.0};
    for (size_t i = 0; i < specials.size() && i < gv.size(); ++i)
      gv[gv.size() - 1 - i] = specials[i];
    std::mt19937 rng(uint32_t(n) + 1);
    std::uniform_real_distribution<float> ud(-2.0f, 2.0f);
    const size_t len = size_t(n);
    std::vector<float> g(len), u(len), out(len + 8, kSentinel);
    std::vector<uint16_t> gb(len), ub(len), outb(len + 8, 0x7777);
    for (size_t i = 0; i < size_t(n); ++i) {
      g[i] = float(gv[i]), u[i] = ud(rng);
      gb[i] = BFloat16::round_from_float(g[i]), ub[i] = BFloat16::round_from_float(u[i]);
    }
    auto bf = [](uint16_t b) { return double(float(BFloat16::from_bits(b))); };
    for (bool with_up : {false, true}) {
      const std::string what = fmt::format("n {} up {}", n, with_up);
      cpu::activation::silu_mul_f32_avx2(out.data(), g.data(), with_up ? u.data() : nullptr, n);
      cpu::activation::silu_mul_bf16_avx2(outb.data(), gb.data(), with_up ? ub.data() : nullptr, n);
      std::vector<double> got, want, got_b, want_b;
      for (size_t i = 0; i < size_t(n); ++i) {
        const double w = silu_ref(g[i]) * (with_up ? double(u[i]) : 1.0);
        const double wb = silu_ref(bf(gb[i])) * (with_up ? bf(ub[i]) : 1.0);
        if (std::isnan(w) || std::isinf(w)) {  // -inf -> NaN, NaN -> NaN, inf -> inf (x up)
          EXPECT_TRUE(std::isnan(w) ? std::isnan(out[i]) : double(out[i]) == w) << what;
          EXPECT_TRUE(std::isnan(wb) ? std::isnan(bf(outb[i])) : bf(outb[i]) == wb) << what;
          continue;
        }
        got.push_back(out[i]), want.push_back(w);
        got_b.push_back(bf(outb[i])), want_b.push_back(wb);
      }
      expect_within_ulps(got, want, DType::F32, with_up ? 5 : 4, "avx2 f32 " + what);
      expect_within_ulps(got_b, want_b, DType::BF16, 1, "avx2 bf16 " + what);
      for (size_t i = size_t(n); i < out.size(); ++i) {
        ASSERT_EQ(out[i], kSentinel) << what;
        ASSERT_EQ(outb[i], 0x7777) << what;
      }
    }
  }
}

TEST(SiluMul, StridedOperandsAndShapesOfAnyRank) {
  // [2, 3, 40] gate as a transposed view, up non-contiguous: same values as contiguous.
  std::mt19937 rng(3);
  const Tensor g = testing::random_tensor({2, 40, 3}, DType::F32, rng);
  const Tensor u = testing::random_tensor({2, 3, 40}, DType::F32, rng);
  const Tensor gt = transpose(g, 1, 2);
  const Tensor fused = silu_mul(gt, testing::noncontiguous_like(u));
  const Tensor plain = silu_mul(contiguous(gt), u);
  EXPECT_EQ(fused.sizes(), (IntShape{2, 3, 40}));
  EXPECT_EQ(values(fused), values(plain));
  // The strided silu takes the element-wise path with the same formula.
  expect_within_ulps(values(silu(gt)), values(silu(contiguous(gt))), DType::F32, 4, "strided silu");
}

TEST(SiluMul, SpecialValuesAsTorch) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  // silu(-inf) = -inf / (1 + inf) = NaN; silu(-100) = -0; silu(inf) = inf; NaN stays.
  const Tensor x = Tensor::from_vector<float>({-inf, -100.f, 0.f, inf, nan, -0.f}, {6});
  const std::vector<double> got = values(silu(x));
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 0.0);
  EXPECT_TRUE(std::signbit(got[1]));
  EXPECT_EQ(got[2], 0.0);
  EXPECT_EQ(got[3], double(inf));
  EXPECT_TRUE(std::isnan(got[4]));
  EXPECT_EQ(got[5], 0.0);
  const Tensor bf = to(x, DType::BF16);
  const std::vector<double> got_bf = values(silu(bf));
  EXPECT_TRUE(std::isnan(got_bf[0]));
  EXPECT_EQ(got_bf[3], double(inf));
  EXPECT_TRUE(std::isnan(got_bf[4]));
}

TEST(SiluMul, ErrorsNameTheOperand) {
  const Tensor g = Tensor::from_vector<float>({1, 2, 3}, {3});
  try {
    silu_mul(g, Tensor::from_vector<float>({1, 2}, {2}));
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[ingot::silu_mul] gate [3] and up [2]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(silu_mul(g, to(g, DType::BF16)), DTypeError);
  EXPECT_THROW(
      silu_mul(Tensor::from_vector<int64_t>({1}, {1}), Tensor::from_vector<int64_t>({1}, {1})),
      DTypeError);
}

TEST(SiluMul, DecomposesToSiluAndMul) {
  const OpDef* def = OpRegistry::instance().find("ingot::silu_mul");
  ASSERT_NE(def, nullptr);
  ASSERT_TRUE(def->decomposition_fn);
}

}  // namespace
}  // namespace ingot
