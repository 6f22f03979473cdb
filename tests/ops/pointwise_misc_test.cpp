#include <cmath>

#include "dtype_safe_random.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

// Values of t broadcast to `out` (row-major).
std::vector<double> broadcast_values(const Tensor& t, const IntShape& out) {
  const auto v = values(t);
  const IntShape s = t.sizes();
  std::vector<double> r;
  IntShape idx(out.size(), 0);
  for (int64_t e = 0; e < shape_numel(out); ++e) {
    int64_t off = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      const size_t od = out.size() - s.size() + d;
      off = off * s[d] + (s[d] == 1 ? 0 : idx[od]);
    }
    r.push_back(v[size_t(off)]);
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

TEST(Where, ThreeWayBroadcastAndPromotion) {
  std::mt19937 rng(31);
  for (DType t : testing::kAllDTypes) {
    const Tensor c = testing::random_for_dtype({3, 1, 4}, DType::Bool, rng);
    const Tensor a = testing::random_for_dtype({2, 4}, t, rng);
    const Tensor b = testing::random_for_dtype({3, 2, 1}, t, rng);
    const IntShape out{3, 2, 4};
    for (bool nc : {false, true}) {
      const Tensor r = ingot::where(nc ? testing::noncontiguous_like(c) : c,
                                    nc ? testing::noncontiguous_like(a) : a,
                                    nc ? testing::noncontiguous_like(b) : b);
      EXPECT_EQ(r.dtype(), t);
      EXPECT_EQ(r.sizes(), out);
      const auto vc = broadcast_values(c, out), va = broadcast_values(a, out), vb = broadcast_values(b, out);
      std::vector<double> expected;
      for (size_t i = 0; i < vc.size(); ++i) expected.push_back(vc[i] != 0 ? va[i] : vb[i]);
      EXPECT_EQ(values(r), expected) << dtype_name(t);
    }
  }
  const Tensor c = Tensor::from_vector<bool>({true, false}, {2});
  const Tensor i = Tensor::from_vector<int32_t>({1, 2}, {2});
  const Tensor f = Tensor::from_vector<Half>({Half(0.5f), Half(1.5f)}, {2});
  const Tensor r = ingot::where(c, i, f);
  EXPECT_EQ(r.dtype(), DType::F16);
  EXPECT_EQ(values(r), (std::vector<double>{1, 1.5}));
  EXPECT_EQ(ingot::where(c, i, Tensor::scalar<double>(2.5)).dtype(), DType::F64);  // 0-d float wins over int
  EXPECT_THROW(ingot::where(i, i, i), DTypeError);
  EXPECT_THROW(ingot::where(c, Tensor::empty({3}, DType::F32), i), ShapeError);
}

TEST(MaskedFill, ScalarAndTensorValues) {
  std::mt19937 rng(37);
  for (DType t : testing::kAllDTypes) {
    const Tensor x = testing::random_for_dtype({4, 5}, t, rng);
    const Tensor m = testing::random_for_dtype({4, 1}, DType::Bool, rng);
    const IntShape out{4, 5};
    const auto vx = values(x), vm = broadcast_values(m, out);
    std::vector<double> expected;
    for (size_t i = 0; i < vx.size(); ++i) expected.push_back(vm[i] != 0 ? 1 : vx[i]);
    const Tensor xs = testing::noncontiguous_like(x);
    const Tensor r = ingot::masked_fill(xs, m, 1);
    EXPECT_EQ(r.dtype(), t);
    EXPECT_EQ(values(r), expected) << dtype_name(t);
    EXPECT_EQ(values(ingot::masked_fill(xs, m, Tensor::scalar<int64_t>(1))), expected) << dtype_name(t);
    EXPECT_EQ(values(xs), vx) << "masked_fill is functional";
  }
  // The mask may broadcast self up.
  const Tensor x = Tensor::from_vector<float>({1, 2}, {2});
  const Tensor m = Tensor::from_vector<bool>({true, false, false, true}, {2, 2});
  const Tensor r = ingot::masked_fill(x, m, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.sizes(), (IntShape{2, 2}));
  testing::expect_close(r, {-INFINITY, 2, 1, -INFINITY}, 0, 0);
  // A float value into an integer tensor converts like torch (truncates).
  EXPECT_EQ(values(ingot::masked_fill(Tensor::from_vector<int32_t>({5}, {1}),
                                      Tensor::from_vector<bool>({true}, {1}), 2.7)),
            (std::vector<double>{2}));
  EXPECT_THROW(ingot::masked_fill(x, Tensor::from_vector<int64_t>({1, 0}, {2}), 0), DTypeError);
  EXPECT_THROW(ingot::masked_fill(x, Tensor::from_vector<bool>({true, false}, {2}),
                                  Tensor::from_vector<float>({1.f}, {1})),
               ShapeError);
}

TEST(Clamp, ScalarBounds) {
  std::mt19937 rng(41);
  for (DType t : {DType::I8, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (const IntShape& shape : {IntShape{3, 7}, IntShape{0, 2}, IntShape{}, IntShape{70000}}) {
      const Tensor a = testing::random_for_dtype(shape, t, rng, -5, 5);
      const Tensor x = testing::noncontiguous_like(a);
      std::vector<double> both, lo, hi, inverted;
      for (double v : values(a)) {
        both.push_back(std::min(std::max(v, -2.0), 3.0));
        lo.push_back(std::max(v, -2.0));
        hi.push_back(std::min(v, 3.0));
        inverted.push_back(1.0);  // min > max gives max
      }
      const std::string what = fmt::format("{} {}", t, shape_str(shape));
      EXPECT_EQ(values(ingot::clamp(x, -2, 3)), both) << what;
      EXPECT_EQ(values(ingot::clamp(x, -2)), lo) << what;
      EXPECT_EQ(values(ingot::clamp(x, std::nullopt, 3)), hi) << what;
      EXPECT_EQ(values(ingot::clamp(x, 2, 1)), inverted) << what;
      EXPECT_EQ(ingot::clamp(x, -2, 3).dtype(), t);
    }
  }
  // Promotion: an integer tensor clamped by a float bound becomes float32.
  const Tensor i = Tensor::from_vector<int64_t>({-3, 0, 3}, {3});
  const Tensor r = ingot::clamp(i, -0.5, 0.5);
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_EQ(values(r), (std::vector<double>{-0.5, 0, 0.5}));
  // NaN stays NaN.
  testing::expect_close(ingot::clamp(Tensor::from_vector<float>({NAN, 9.f}, {2}), 0, 1), {NAN, 1}, 0, 0);
  EXPECT_THROW(ingot::clamp(i, std::nullopt, std::nullopt), ValueError);
  // bool with int bounds promotes to int64 (torch.result_type); all-bool is rejected.
  EXPECT_EQ(ingot::clamp(Tensor::from_vector<bool>({true}, {1}), 0, 1).dtype(), DType::I64);
  EXPECT_THROW(ingot::clamp(Tensor::from_vector<bool>({true}, {1}), false, true), DTypeError);
}

TEST(Clamp, TensorBoundsBroadcast) {
  std::mt19937 rng(43);
  for (DType t : {DType::I32, DType::F16, DType::F32, DType::F64}) {
    const Tensor x = testing::random_for_dtype({4, 3}, t, rng, -5, 5);
    const Tensor lo = testing::random_for_dtype({3}, t, rng, -3, 0);
    const Tensor hi = testing::random_for_dtype({4, 1}, t, rng, 0, 3);
    const IntShape out{4, 3};
    const auto vx = values(x), vl = broadcast_values(lo, out), vh = broadcast_values(hi, out);
    std::vector<double> both, only_lo, only_hi;
    for (size_t k = 0; k < vx.size(); ++k) {
      both.push_back(std::min(std::max(vx[k], vl[k]), vh[k]));
      only_lo.push_back(std::max(vx[k], vl[k]));
      only_hi.push_back(std::min(vx[k], vh[k]));
    }
    const Tensor xs = testing::noncontiguous_like(x);
    EXPECT_EQ(values(ingot::clamp(xs, lo, hi)), both) << dtype_name(t);
    EXPECT_EQ(values(ingot::clamp(xs, lo, Tensor())), only_lo) << dtype_name(t);
    EXPECT_EQ(values(ingot::clamp(xs, Tensor(), hi)), only_hi) << dtype_name(t);
  }
  // Bounds broadcast the result up; NaN in a bound propagates (torch.maximum semantics).
  const Tensor x = Tensor::from_vector<float>({1.f}, {1});
  const Tensor lo = Tensor::from_vector<float>({0.f, NAN, 2.f}, {3});
  const Tensor r = ingot::clamp(x, lo, Tensor());
  EXPECT_EQ(r.sizes(), (IntShape{3}));
  testing::expect_close(r, {1, NAN, 2}, 0, 0);
  EXPECT_THROW(ingot::clamp(x, Tensor(), Tensor()), ValueError);
}

TEST(Pow, AllOverloadsMatchReference) {
  std::mt19937 rng(47);
  for (DType t : testing::kFloatDTypes) {
    const Tensor a = testing::random_for_dtype({3, 5}, t, rng, 0.1, 2);
    const Tensor e = testing::random_for_dtype({5}, t, rng, -2, 2);
    const Tensor x = testing::noncontiguous_like(a);
    const double atol = testing::default_atol(t) * 4, rtol = testing::default_rtol(t) * 2;
    const auto va = values(a), ve = values(e);
    for (double p : {2.0, 1.0, 0.5, -1.0, -0.5, 3.0, 1.7}) {
      std::vector<double> expected;
      for (double v : va) expected.push_back(std::pow(v, p));
      testing::expect_close(ingot::pow(x, p), expected, atol, rtol, fmt::format("pow {} ^{}", t, p));
    }
    std::vector<double> tt;
    for (size_t k = 0; k < va.size(); ++k) tt.push_back(std::pow(va[k], ve[k % 5]));
    testing::expect_close(ingot::pow(x, e), tt, atol, rtol, fmt::format("pow.Tensor_Tensor {}", t));
    std::vector<double> st;
    for (double v : ve) st.push_back(std::pow(2.0, v));
    const Tensor s = ingot::pow(2, testing::noncontiguous_like(e));
    EXPECT_EQ(s.dtype(), t);
    testing::expect_close(s, st, atol, rtol, fmt::format("pow.Scalar {}", t));
  }
}

TEST(Pow, IntegerPowersAndPromotion) {
  const Tensor i = Tensor::from_vector<int64_t>({-3, -1, 0, 1, 2, 5}, {6});
  EXPECT_EQ(ingot::pow(i, 3).dtype(), DType::I64);
  EXPECT_EQ(values(ingot::pow(i, 3)), (std::vector<double>{-27, -1, 0, 1, 8, 125}));
  EXPECT_EQ(values(ingot::pow(i, 0)), (std::vector<double>{1, 1, 1, 1, 1, 1}));
  const Tensor e = Tensor::from_vector<int64_t>({2, -1, 3, -2, -1, 2}, {6});
  // Negative integer exponents give 1 / -1 / 0 (integer division) like torch.
  EXPECT_EQ(values(ingot::pow(i, e)), (std::vector<double>{9, -1, 0, 1, 0, 25}));
  EXPECT_EQ(values(ingot::pow(2, Tensor::from_vector<int32_t>({0, 3, 10}, {3}))),
            (std::vector<double>{1, 8, 1024}));
  EXPECT_EQ(ingot::pow(2, Tensor::from_vector<int32_t>({1}, {1})).dtype(), DType::I32);
  const Tensor f = ingot::pow(i, 0.5);  // float exponent promotes to float32
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(ingot::pow(2.5, Tensor::from_vector<int32_t>({2}, {1})).dtype(), DType::F32);
  EXPECT_THROW(ingot::pow(i, -2), ValueError);
  EXPECT_EQ(values(ingot::pow(Tensor::from_vector<bool>({true, false}, {2}), 2)), (std::vector<double>{1, 0}));
  const Tensor b = Tensor::from_vector<bool>({true}, {1});
  EXPECT_THROW(ingot::pow(b, b), DTypeError);
}

}  // namespace
}  // namespace ingot
