// SiLU through cpu::silu_mul (the vectorised path of the silu op for contiguous tensors)
// and the fused ingot::silu_mul(gate, up): against a double reference computed once and
// rounded once, at lengths that exercise the 16-lane tails and the threaded split, for
// float32 and bfloat16; special values as torch; errors name the operand.
#include <cmath>
#include <limits>
#include <random>

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
