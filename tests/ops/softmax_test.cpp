#include <cmath>

#include "ingot/ops/registry.h"
#include "op_test_util.h"
#include "reduce_reference.h"

namespace ingot {
namespace {

using testing::values;

std::vector<double> ref_softmax(const std::vector<double>& row) {
  double m = -INFINITY;
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  std::vector<double> r;
  for (double v : row) r.push_back(std::exp(v - m) / s);
  return r;
}
std::vector<double> ref_log_softmax(const std::vector<double>& row) {
  double m = -INFINITY;
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  std::vector<double> r;
  for (double v : row) r.push_back(v - m - std::log(s));
  return r;
}

struct Case {
  IntShape sizes;
  int64_t dim;
};
const Case kCases[] = {{{2, 3, 4}, 0}, {{2, 3, 4}, 1}, {{2, 3, 4}, -1}, {{2, 3, 4}, 2},
                       {{5}, 0},       {{}, 0},        {{}, -1},       {{0, 3}, 1},
                       {{3, 0}, 1},    {{3, 1}, 1},    {{64, 1000}, -1}, {{300, 130}, 0}};

TEST(Softmax, MatchesReferenceForFloatDTypesWithViews) {
  std::mt19937 rng(67);
  for (DType t : testing::kFloatDTypes) {
    for (const Case& c : kCases) {
      const Tensor a = testing::random_tensor(c.sizes, t, rng, -5, 5);
      const auto sm = testing::reference_along_dim(c.sizes, values(a), c.dim, ref_softmax);
      const auto lsm = testing::reference_along_dim(c.sizes, values(a), c.dim, ref_log_softmax);
      for (bool nc : {false, true}) {
        const Tensor x = nc ? testing::noncontiguous_like(a) : a;
        const std::string what = fmt::format("{} {} dim {}{}", t, shape_str(c.sizes), c.dim, nc ? " strided" : "");
        const Tensor y = ingot::softmax(x, c.dim);
        EXPECT_EQ(y.dtype(), t) << what;
        EXPECT_EQ(y.sizes(), c.sizes) << what;
        testing::expect_close(y, sm, testing::default_atol(t), testing::default_rtol(t), "softmax " + what);
        testing::expect_close(ingot::log_softmax(x, c.dim), lsm, testing::default_atol(t) * 4,
                              testing::default_rtol(t), "log_softmax " + what);
      }
    }
  }
}

TEST(Softmax, MaskedRows) {
  // A row with some -inf gives 0 there; a fully masked row gives NaN like torch.
  const Tensor x = Tensor::from_vector<float>({0, -INFINITY, 0, -INFINITY, -INFINITY, -INFINITY}, {2, 3});
  testing::expect_close(ingot::softmax(x, -1), {0.5, 0, 0.5, NAN, NAN, NAN}, 1e-7, 0);
  testing::expect_close(ingot::log_softmax(x, -1), {std::log(0.5), -INFINITY, std::log(0.5), NAN, NAN, NAN}, 1e-6, 0);
  testing::expect_close(ingot::softmax(transpose(x, 0, 1), 0), {0.5, NAN, 0, NAN, 0.5, NAN}, 1e-7, 0);
  // Large values do not overflow (max-subtracted).
  const Tensor big = Tensor::from_vector<float>({1000, 1000}, {2});
  testing::expect_close(ingot::softmax(big, 0), {0.5, 0.5}, 1e-7, 0);
}

TEST(Softmax, DTypeArgumentAndAtenOps) {
  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3}, {3});
  const Tensor y = ingot::softmax(i, 0, DType::F32);
  EXPECT_EQ(y.dtype(), DType::F32);
  testing::expect_close(y, ref_softmax({1, 2, 3}), 1e-6, 1e-6);
  EXPECT_THROW(ingot::softmax(i, 0), DTypeError);
  EXPECT_THROW(ingot::softmax(Tensor::from_vector<float>({1, 2}, {2}), 1), ValueError);

  std::mt19937 rng(71);
  const Tensor h = testing::random_tensor({4, 9}, DType::F16, rng, -4, 4);
  const OpDef& aten_softmax = OpRegistry::instance().get("_softmax");
  const OpDef& aten_log_softmax = OpRegistry::instance().get("_log_softmax");
  const Tensor hf = call_op(aten_softmax, {testing::noncontiguous_like(h), int64_t(1), true})[0];
  EXPECT_EQ(hf.dtype(), DType::F32);  // half_to_float
  testing::expect_close(hf, testing::reference_along_dim({4, 9}, values(h), 1, ref_softmax), 1e-6, 1e-5);
  const Tensor lf = call_op(aten_log_softmax, {h, int64_t(-1), true})[0];
  testing::expect_close(lf, testing::reference_along_dim({4, 9}, values(h), 1, ref_log_softmax), 1e-5, 1e-5);
  EXPECT_EQ(call_op(aten_softmax, {h, int64_t(0), false})[0].dtype(), DType::F16);
  EXPECT_THROW(call_op(aten_softmax, {Tensor::from_vector<float>({1}, {1}), int64_t(0), true}), DTypeError);
  // softmax.int decomposes into _softmax.
  const OpDef& softmax_int = OpRegistry::instance().get("softmax.int");
  ASSERT_TRUE(bool(softmax_int.decomposition_fn));
  const OpArgs args = normalize_args(softmax_int, {i, int64_t(0), DType::F64});
  const Tensor d = softmax_int.decomposition_fn(args)[0];
  EXPECT_EQ(d.dtype(), DType::F64);
  testing::expect_close(d, ref_softmax({1, 2, 3}), 1e-12, 1e-12);
}

}  // namespace
}  // namespace ingot
