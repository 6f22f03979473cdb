#include <cmath>

#include "dtype_safe_random.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

using testing::reference_binary;

struct Case {
  IntShape a, b, out;
};
const Case kShapes[] = {{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}, {2, 3, 4}},
                        {{3, 1}, {1, 5}, {3, 5}},          {{}, {2, 2}, {2, 2}},
                        {{0, 3}, {3}, {0, 3}},             {{40000, 2}, {2}, {40000, 2}}};

struct CmpCase {
  const char* name;
  // (The trailing parameter is the caller's source line, recorded by export.)
  Tensor (*tensor_op)(const Tensor&, const Tensor&, std::source_location);
  Tensor (*scalar_op)(const Tensor&, Scalar, std::source_location);
  std::function<bool(double, double)> ref;
};
const CmpCase kCmps[] = {
    {"eq", ingot::eq, ingot::eq, [](double u, double v) { return u == v; }},
    {"ne", ingot::ne, ingot::ne, [](double u, double v) { return u != v; }},
    {"lt", ingot::lt, ingot::lt, [](double u, double v) { return u < v; }},
    {"le", ingot::le, ingot::le, [](double u, double v) { return u <= v; }},
    {"gt", ingot::gt, ingot::gt, [](double u, double v) { return u > v; }},
    {"ge", ingot::ge, ingot::ge, [](double u, double v) { return u >= v; }},
};

TEST(Comparison, MatchesReferenceForAllDTypesWithViews) {
  std::mt19937 rng(17);
  for (DType t : testing::kAllDTypes) {
    for (const Case& c : kShapes) {
      // Small integer-valued ranges make equal elements common.
      const Tensor a = testing::random_for_dtype(c.a, t, rng, -2, 2);
      const Tensor b = testing::random_for_dtype(c.b, t, rng, -2, 2);
      for (bool nc : {false, true}) {
        const Tensor x = nc ? testing::noncontiguous_like(a) : a;
        const Tensor y = nc ? testing::noncontiguous_like(b) : b;
        for (const CmpCase& k : kCmps) {
          const std::string what = fmt::format("{} {} {}{}", k.name, t, shape_str(c.a), nc ? " strided" : "");
          const Tensor r = k.tensor_op(x, y, std::source_location::current());
          EXPECT_EQ(r.dtype(), DType::Bool) << what;
          EXPECT_EQ(r.sizes(), c.out) << what;
          EXPECT_EQ(values(r), reference_binary(a, b, c.out, [&](double u, double v) { return k.ref(u, v) ? 1.0 : 0.0; })) << what;
          const Tensor s = k.scalar_op(x, 1, std::source_location::current());
          std::vector<double> expected;
          for (double v : values(a)) expected.push_back(k.ref(v, 1) ? 1 : 0);
          EXPECT_EQ(values(s), expected) << what << " scalar";
        }
      }
    }
  }
}

TEST(Comparison, ComparesInThePromotedDType) {
  const Tensor i = Tensor::from_vector<int64_t>({1, 2, 3}, {3});
  EXPECT_EQ(values(ingot::lt(i, 2.5)), (std::vector<double>{1, 1, 0}));  // not 2.5 -> 2
  EXPECT_EQ(values(ingot::eq(i, 2.0)), (std::vector<double>{0, 1, 0}));
  const Tensor h = Tensor::from_vector<Half>({Half(0.1f), Half(2.f)}, {2});
  const Tensor f = Tensor::from_vector<float>({0.1f, 2.f}, {2});
  // 0.1 in f16 differs from 0.1 in f32: compared as f32 they are unequal.
  EXPECT_EQ(values(ingot::eq(h, f)), (std::vector<double>{0, 1}));
  const Tensor u = Tensor::from_vector<uint8_t>({0, 255}, {2});
  const Tensor i8 = Tensor::from_vector<int8_t>({-1, -1}, {2});
  EXPECT_EQ(values(ingot::gt(u, i8)), (std::vector<double>{1, 1}));  // compared as int16
  const double nan = std::nan("");
  const Tensor n = Tensor::from_vector<double>({nan, 1.0}, {2});
  EXPECT_EQ(values(ingot::eq(n, n)), (std::vector<double>{0, 1}));
  EXPECT_EQ(values(ingot::ne(n, n)), (std::vector<double>{1, 0}));
  EXPECT_THROW(ingot::eq(Tensor::empty({2, 3}, DType::F32), Tensor::empty({4}, DType::F32)), ShapeError);
}

TEST(Comparison, LogicalOpsReadTruthValuesOfAnyDType) {
  std::mt19937 rng(23);
  for (DType t : testing::kAllDTypes) {
    const Tensor a = testing::random_for_dtype({3, 4}, t, rng, -1, 1);
    const Tensor b = testing::random_for_dtype({4}, t, rng, -1, 1);
    const Tensor x = testing::noncontiguous_like(a);
    const auto ra = reference_binary(a, b, {3, 4}, [](double u, double v) { return (u != 0 && v != 0) ? 1.0 : 0.0; });
    const auto ro = reference_binary(a, b, {3, 4}, [](double u, double v) { return (u != 0 || v != 0) ? 1.0 : 0.0; });
    EXPECT_EQ(values(ingot::logical_and(x, b)), ra) << dtype_name(t);
    EXPECT_EQ(values(ingot::logical_or(x, b)), ro) << dtype_name(t);
    std::vector<double> rn;
    for (double v : values(a)) rn.push_back(v == 0 ? 1 : 0);
    EXPECT_EQ(values(ingot::logical_not(x)), rn) << dtype_name(t);
    EXPECT_EQ(ingot::logical_not(x).dtype(), DType::Bool);
  }
  const Tensor n = Tensor::from_vector<float>({std::nanf(""), 0.f}, {2});
  EXPECT_EQ(values(ingot::logical_not(n)), (std::vector<double>{0, 1}));  // NaN is true
  const Tensor i = Tensor::from_vector<int32_t>({2, 0}, {2});
  EXPECT_EQ(values(ingot::logical_and(n, i)), (std::vector<double>{1, 0}));  // mixed dtypes
}

}  // namespace
}  // namespace ingot
