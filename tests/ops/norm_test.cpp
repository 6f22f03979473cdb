#include <limits>

#include "ingot/ops/registry.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

struct NormCase {
  IntShape input;
  IntShape normalized;
};

const NormCase kNormCases[] = {
    {{2, 3, 8}, {8}},     {{4, 5, 6}, {5, 6}}, {{3, 70}, {70}},  // 70: not a multiple of 16
    {{0, 8}, {8}},        {{3, 1}, {1}},       {{5}, {5}},
    {{64, 1024}, {1024}},  // enough rows to run threaded
};

int64_t numel_of(const IntShape& s) {
  return shape_numel(s);
}

// Double-precision layer_norm over rows of n.
std::vector<double> reference_layer_norm(const std::vector<double>& x, int64_t n,
                                         const std::vector<double>* w, const std::vector<double>* b,
                                         double eps) {
  std::vector<double> out(x.size());
  for (size_t r = 0; n > 0 && r < x.size() / size_t(n); ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * size_t(n) + size_t(i)];
    mean /= double(n);
    for (int64_t i = 0; i < n; ++i) {
      const double d = x[r * size_t(n) + size_t(i)] - mean;
      var += d * d;
    }
    var /= double(n);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i) {
      double y = (x[r * size_t(n) + size_t(i)] - mean) * rstd;
      if (w) y *= (*w)[size_t(i)];
      if (b) y += (*b)[size_t(i)];
      out[r * size_t(n) + size_t(i)] = y;
    }
  }
  return out;
}

std::vector<double> reference_rms_norm(const std::vector<double>& x, int64_t n,
                                       const std::vector<double>* w, double eps) {
  std::vector<double> out(x.size());
  for (size_t r = 0; n > 0 && r < x.size() / size_t(n); ++r) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i)
      ss += x[r * size_t(n) + size_t(i)] * x[r * size_t(n) + size_t(i)];
    const double rr = 1.0 / std::sqrt(ss / double(n) + eps);
    for (int64_t i = 0; i < n; ++i) {
      out[r * size_t(n) + size_t(i)] =
          x[r * size_t(n) + size_t(i)] * rr * (w ? (*w)[size_t(i)] : 1.0);
    }
  }
  return out;
}

SymIntList sym(const IntShape& s) {
  return to_sym_shape(s);
}

TEST(LayerNorm, MatchesReferenceForFloatDTypesWithViews) {
  std::mt19937 rng(11);
  for (DType t : testing::kFloatDTypes) {
    for (const NormCase& c : kNormCases) {
      const int64_t n = numel_of(c.normalized);
      Tensor x = testing::random_tensor(c.input, t, rng, -3, 3);
      Tensor w = testing::random_tensor(c.normalized, t, rng, 0.5, 1.5);
      Tensor b = testing::random_tensor(c.normalized, t, rng, -1, 1);
      const auto xv = values(x), wv = values(w), bv = values(b);
      const double atol = 2 * testing::default_atol(t), rtol = 2 * testing::default_rtol(t);
      for (bool nc : {false, true}) {
        Tensor xi = nc ? testing::noncontiguous_like(x) : x;
        const std::string what =
            fmt::format("{} {} {}", t, shape_str(c.input), nc ? "strided" : "");
        Tensor y = layer_norm(xi, sym(c.normalized), w, b, 1e-5);
        EXPECT_EQ(y.dtype(), t);
        EXPECT_EQ(y.sizes(), c.input);
        testing::expect_close(y, reference_layer_norm(xv, n, &wv, &bv, 1e-5), atol, rtol,
                              "affine " + what);
        testing::expect_close(layer_norm(xi, sym(c.normalized)),
                              reference_layer_norm(xv, n, nullptr, nullptr, 1e-5), atol, rtol,
                              "plain " + what);
        testing::expect_close(layer_norm(xi, sym(c.normalized), std::nullopt, b, 0.1),
                              reference_layer_norm(xv, n, nullptr, &bv, 0.1), atol, rtol,
                              "bias only " + what);
      }
    }
  }
}

TEST(LayerNorm, HalfInputWithFloatParametersKeepsInputDType) {
  std::mt19937 rng(3);
  Tensor x = testing::random_tensor({4, 16}, DType::BF16, rng);
  Tensor w = testing::random_tensor({16}, DType::F32, rng);
  Tensor b = testing::random_tensor({16}, DType::F32, rng);
  Tensor y = layer_norm(x, {16}, w, b);
  EXPECT_EQ(y.dtype(), DType::BF16);
  const auto wv = values(w), bv = values(b);
  testing::expect_close(y, reference_layer_norm(values(x), 16, &wv, &bv, 1e-5), 2e-2, 2e-2);
}

TEST(RmsNorm, MatchesReferenceForFloatDTypesWithViews) {
  std::mt19937 rng(12);
  for (DType t : testing::kFloatDTypes) {
    for (const NormCase& c : kNormCases) {
      const int64_t n = numel_of(c.normalized);
      Tensor x = testing::random_tensor(c.input, t, rng, -3, 3);
      Tensor w = testing::random_tensor(c.normalized, t, rng, 0.5, 1.5);
      const auto xv = values(x), wv = values(w);
      const double atol = 2 * testing::default_atol(t), rtol = 2 * testing::default_rtol(t);
      // eps None: the op-math type's epsilon (float's for 16-bit inputs), as ATen.
      const double default_eps = t == DType::F64 ? std::numeric_limits<double>::epsilon()
                                                 : double(std::numeric_limits<float>::epsilon());
      for (bool nc : {false, true}) {
        Tensor xi = nc ? testing::noncontiguous_like(x) : x;
        const std::string what =
            fmt::format("{} {} {}", t, shape_str(c.input), nc ? "strided" : "");
        Tensor y = rms_norm(xi, sym(c.normalized), w, 1e-6);
        EXPECT_EQ(y.dtype(), t);
        EXPECT_EQ(y.sizes(), c.input);
        testing::expect_close(y, reference_rms_norm(xv, n, &wv, 1e-6), atol, rtol,
                              "weight " + what);
        testing::expect_close(rms_norm(xi, sym(c.normalized)),
                              reference_rms_norm(xv, n, nullptr, default_eps), atol, rtol,
                              "default eps " + what);
      }
    }
  }
}

TEST(RmsNorm, DefaultEpsIsOpMathEpsilon) {
  // An all-zero row: out = 0 * rsqrt(eps); a tiny row shows eps directly.
  Tensor x = Tensor::from_vector<float>({1e-4f, -1e-4f}, {1, 2});
  const double eps = std::numeric_limits<float>::epsilon();
  const double r = 1.0 / std::sqrt(1e-8 + eps);
  testing::expect_close(rms_norm(x, {2}), {1e-4 * r, -1e-4 * r}, 1e-7, 1e-5);
}

TEST(RmsNorm, HuggingFaceOrderRoundsBeforeTheWeight) {
  std::mt19937 rng(5);
  for (DType t : {DType::BF16, DType::F16, DType::F32}) {
    Tensor x = testing::random_tensor({3, 40}, t, rng);
    Tensor w = testing::random_tensor({40}, t, rng, 0.5, 1.5);
    Tensor y = rms_norm_hf(x, w, 1e-6);
    EXPECT_EQ(y.dtype(), t);
    // y = w * T(x * r): the normalised value is rounded to T before the multiply.
    Tensor normalised = rms_norm(x, {40}, std::nullopt, 1e-6);
    const auto nv = values(normalised), wv = values(w);
    std::vector<double> expected(nv.size());
    for (size_t i = 0; i < nv.size(); ++i) expected[i] = nv[i] * wv[i % 40];
    testing::expect_close(y, expected, testing::default_atol(t), testing::default_rtol(t));
    testing::expect_close(normalised, reference_rms_norm(values(x), 40, nullptr, 1e-6),
                          testing::default_atol(t), testing::default_rtol(t));
  }
  // A float32 weight promotes the result, as `self.weight * hidden.to(input_dtype)` does.
  Tensor x = testing::random_tensor({2, 8}, DType::BF16, rng);
  Tensor w = testing::random_tensor({8}, DType::F32, rng);
  EXPECT_EQ(rms_norm_hf(x, w, 1e-6).dtype(), DType::F32);
  EXPECT_EQ(rms_norm(x, {8}, w).dtype(), DType::BF16);
}

TEST(Norm, ErrorsNameTheShapes) {
  Tensor x = Tensor::empty({2, 3, 4}, DType::F32, true);
  try {
    layer_norm(x, {3});
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("[layer_norm]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3, 4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(layer_norm(x, {4}, Tensor::empty({3}, DType::F32)), ShapeError);
  EXPECT_THROW(layer_norm(x, {}), ValueError);
  EXPECT_THROW(rms_norm(x, {3, 4}, Tensor::empty({4}, DType::F32)), ShapeError);
  EXPECT_THROW(rms_norm(x, {2, 3, 4, 5}), ShapeError);
  EXPECT_THROW(rms_norm(Tensor::empty({2, 4}, DType::I64, true), {4}), DTypeError);
}

}  // namespace
}  // namespace ingot
