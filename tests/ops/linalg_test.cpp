// mm / bmm / addmm / matmul / linear against a double-precision reference, over float
// dtypes, non-contiguous operands, broadcasting and 1-D cases, plus their error messages.
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

// Reference torch.matmul on values (row-major) of shapes sa, sb, in double.
std::vector<double> ref_matmul(const std::vector<double>& va, IntShape sa,
                               const std::vector<double>& vb, IntShape sb, IntShape* out_shape) {
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t n = sa[sa.size() - 2], k = sa.back(), p = sb.back();
  IntShape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const size_t r = std::max(ba.size(), bb.size());
  ba.insert(ba.begin(), r - ba.size(), 1);
  bb.insert(bb.begin(), r - bb.size(), 1);
  IntShape batch(r);
  for (size_t d = 0; d < r; ++d) batch[d] = std::max(ba[d], bb[d]);
  const int64_t nb = shape_numel(batch);
  std::vector<double> out(size_t(nb * n * p));
  for (int64_t i = 0; i < nb; ++i) {
    int64_t rem = i, oa = 0, ob = 0, sa_ = 1, sb_ = 1;
    for (size_t d = r; d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += (ba[d] == 1 ? 0 : idx) * sa_;
      ob += (bb[d] == 1 ? 0 : idx) * sb_;
      sa_ *= ba[d];
      sb_ *= bb[d];
    }
    for (int64_t x = 0; x < n; ++x)
      for (int64_t y = 0; y < p; ++y) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q)
          s += va[size_t((oa * n + x) * k + q)] * vb[size_t((ob * k + q) * p + y)];
        out[size_t((i * n + x) * p + y)] = s;
      }
  }
  *out_shape = batch;
  if (!a1) out_shape->push_back(n);
  if (!b1) out_shape->push_back(p);
  return out;
}

// Tolerance for a length-k f32-accumulated product rounded to dtype t (inputs in [-2, 2]).
double atol_for(DType t, int64_t k) {
  return (t == DType::F64 ? 1e-12 : 4e-5) * std::sqrt(double(k) + 1) * 4 +
         (t == DType::BF16  ? 0.02
          : t == DType::F16 ? 3e-3
                            : 0.0) *
             std::sqrt(double(k) + 1);
}
double rtol_for(DType t) {
  return t == DType::BF16 ? 8e-3 : t == DType::F16 ? 1e-3 : 1e-6;
}

class Linalg : public ::testing::Test {
 protected:
  std::mt19937 rng{11};
  Tensor rnd(const IntShape& s, DType t) { return testing::random_tensor(s, t, rng); }
};

const DType kDTypes[] = {DType::F32, DType::BF16, DType::F16, DType::F64};

TEST_F(Linalg, MatmulMatchesReferenceForAllRankCombinations) {
  const std::pair<IntShape, IntShape> cases[] = {{{7}, {7}},
                                                 {{5}, {5, 3}},
                                                 {{4, 5}, {5}},
                                                 {{3, 4}, {4, 6}},
                                                 {{2, 3, 4}, {4, 5}},
                                                 {{4}, {2, 4, 5}},
                                                 {{2, 3, 4}, {4}},
                                                 {{2, 1, 3, 4}, {5, 4, 6}},
                                                 {{0, 4}, {4, 3}},
                                                 {{3, 0}, {0, 2}},
                                                 {{1, 1}, {1, 1}},
                                                 {{2, 37, 70}, {2, 70, 33}},
                                                 {{6, 2, 5}, {1, 5, 3}}};
  for (DType t : kDTypes)
    for (const auto& [sa, sb] : cases)
      for (bool nc : {false, true}) {
        Tensor a = rnd(sa, t), b = rnd(sb, t);
        Tensor x = nc ? testing::noncontiguous_like(a) : a;
        Tensor y = nc ? testing::noncontiguous_like(b) : b;
        IntShape os;
        auto ref = ref_matmul(values(a), sa, values(b), sb, &os);
        Tensor out = matmul(x, y);
        const std::string what =
            fmt::format("matmul {} {} {} {}", t, shape_str(sa), shape_str(sb), nc);
        ASSERT_EQ(out.sizes(), os) << what;
        EXPECT_EQ(out.dtype(), t);
        testing::expect_close(out, ref, atol_for(t, sa.back()), rtol_for(t), what);
      }
}

TEST_F(Linalg, MmBmmAddmm) {
  for (DType t : kDTypes) {
    Tensor a = rnd({9, 20}, t), b = rnd({20, 33}, t);
    IntShape os;
    auto ref = ref_matmul(values(a), {9, 20}, values(b), {20, 33}, &os);
    testing::expect_close(mm(testing::noncontiguous_like(a), b), ref, atol_for(t, 20), rtol_for(t),
                          "mm");
    // addmm: beta * bias-row + alpha * product; beta = 0 ignores NaN in self.
    Tensor self = rnd({33}, t);
    auto vs = values(self);
    std::vector<double> expect(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) expect[i] = 0.5 * vs[i % 33] + 2.0 * ref[i];
    testing::expect_close(addmm(self, a, b, 0.5, 2.0), expect, 2 * atol_for(t, 20), rtol_for(t),
                          "addmm");
    Tensor nan_self = testing::make_tensor({9, 33}, t, [](int64_t) { return NAN; });
    testing::expect_close(addmm(nan_self, a, b, 0, 1), ref, atol_for(t, 20), rtol_for(t),
                          "addmm beta=0");

    Tensor ba = rnd({3, 5, 20}, t), bb = rnd({3, 20, 4}, t);
    auto bref = ref_matmul(values(ba), {3, 5, 20}, values(bb), {3, 20, 4}, &os);
    testing::expect_close(bmm(ba, testing::noncontiguous_like(bb)), bref, atol_for(t, 20),
                          rtol_for(t), "bmm");
  }
}

TEST_F(Linalg, LinearWithAndWithoutBias) {
  for (DType t : kDTypes)
    for (IntShape in : {IntShape{16}, IntShape{3, 16}, IntShape{2, 5, 16}, IntShape{0, 16}})
      for (bool with_bias : {false, true}) {
        Tensor x = rnd(in, t), w = rnd({24, 16}, t), bias = rnd({24}, t);
        // reference: x · w^T (+ bias)
        std::vector<double> vw = values(w), wt(vw.size());
        for (int64_t o = 0; o < 24; ++o)
          for (int64_t i = 0; i < 16; ++i) wt[size_t(i * 24 + o)] = vw[size_t(o * 16 + i)];
        IntShape os;
        auto ref = ref_matmul(values(x), in, wt, {16, 24}, &os);
        if (with_bias) {
          auto vb = values(bias);
          for (size_t i = 0; i < ref.size(); ++i) ref[i] += vb[i % 24];
        }
        Tensor out = linear(testing::noncontiguous_like(x), w, with_bias ? bias : Tensor());
        IntShape expect_shape = in;
        expect_shape.back() = 24;
        ASSERT_EQ(out.sizes(), expect_shape);
        testing::expect_close(out, ref, 2 * atol_for(t, 16), rtol_for(t),
                              fmt::format("linear {} {} bias={}", t, shape_str(in), with_bias));
      }
}

TEST_F(Linalg, LargeLinearUsesBlockedAndGemvPaths) {
  // m = 1 (GEMV) and m = 70 (blocked) with a bf16 weight: only accumulation error remains.
  for (int64_t m : {1, 3, 70}) {
    Tensor x = rnd({m, 300}, DType::BF16), w = rnd({130, 300}, DType::BF16);
    std::vector<double> vw = values(w), wt(vw.size());
    for (int64_t o = 0; o < 130; ++o)
      for (int64_t i = 0; i < 300; ++i) wt[size_t(i * 130 + o)] = vw[size_t(o * 300 + i)];
    IntShape os;
    auto ref = ref_matmul(values(x), {m, 300}, wt, {300, 130}, &os);
    testing::expect_close(linear(x, w), ref, atol_for(DType::BF16, 300), rtol_for(DType::BF16),
                          fmt::format("linear bf16 m={}", m));
  }
}

TEST_F(Linalg, IntegerMatmul) {
  Tensor a = testing::make_tensor({2, 3}, DType::I64, [](int64_t i) { return double(i); });
  Tensor b = testing::make_tensor({3, 2}, DType::I64, [](int64_t i) { return double(i + 1); });
  testing::expect_close(mm(a, b), {13, 16, 40, 52}, 0, 0, "int mm");
}

TEST_F(Linalg, ErrorsNameTheOpAndShapes) {
  Tensor a = rnd({3, 4}, DType::F32), b = rnd({5, 6}, DType::F32);
  try {
    mm(a, b);
    FAIL() << "mm accepted mismatched shapes";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[mm] shapes [3, 4] and [5, 6] cannot be multiplied");
  }
  EXPECT_THROW(mm(a, rnd({4, 2}, DType::BF16)), DTypeError);
  EXPECT_THROW(mm(rnd({3}, DType::F32), b), ShapeError);
  EXPECT_THROW(bmm(rnd({2, 3, 4}, DType::F32), rnd({3, 4, 5}, DType::F32)), ShapeError);
  EXPECT_THROW(matmul(rnd({2, 3, 4}, DType::F32), rnd({3, 5, 6}, DType::F32)), ShapeError);
  EXPECT_THROW(matmul(Tensor::scalar<float>(1), a), ShapeError);
  EXPECT_THROW(linear(rnd({2, 5}, DType::F32), rnd({3, 4}, DType::F32)), ShapeError);
  EXPECT_THROW(linear(rnd({2, 4}, DType::F32), rnd({3, 4}, DType::F32), rnd({4}, DType::F32)),
               ShapeError);
}

}  // namespace
}  // namespace ingot
