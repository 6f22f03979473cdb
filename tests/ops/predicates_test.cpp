// isnan, all, any against direct evaluation, for every dtype and non-contiguous views.
#include <cmath>
#include <limits>

#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

TEST(Isnan, MarksNaNsForFloatsAndNothingForIntegers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::from_vector<float>(
      {1, nan, -0.0f, std::numeric_limits<float>::infinity(), nan, 3}, {2, 3});
  for (DType t : testing::kFloatDTypes) {
    Tensor r = isnan(testing::noncontiguous_like(to(x, t)));
    EXPECT_EQ(r.dtype(), DType::Bool);
    EXPECT_EQ(r.sizes(), (IntShape{2, 3}));
    EXPECT_EQ(values(r), (std::vector<double>{0, 1, 0, 0, 1, 0})) << dtype_name(t);
  }
  for (DType t : {DType::Bool, DType::U8, DType::I32, DType::I64}) {
    std::mt19937 rng(3);
    Tensor r = isnan(testing::random_tensor({4, 5}, t, rng, 0, 3));
    EXPECT_EQ(values(r), std::vector<double>(20, 0.0)) << dtype_name(t);
  }
}

TEST(AllAny, ReduceTruthValuesOfEveryDType) {
  std::mt19937 rng(5);
  for (DType t : testing::kAllDTypes) {
    for (const IntShape& shape : {IntShape{3, 4}, IntShape{7}, IntShape{}, IntShape{0, 2}}) {
      // Values in {0, 1}: some rows all true, some mixed.
      Tensor x = testing::random_tensor(shape, t, rng, 0, 1);
      bool want_all = true, want_any = false;
      for (double v : values(x)) {
        want_all = want_all && v != 0;
        want_any = want_any || v != 0;
      }
      Tensor view = x.dim() >= 1 ? testing::noncontiguous_like(x) : x;
      Tensor a = all(view), o = any(view);
      ASSERT_EQ(a.dim(), 0);
      EXPECT_EQ(a.dtype(), DType::Bool);
      EXPECT_EQ(a.item<bool>(), want_all) << dtype_name(t) << " " << shape_str(shape);
      EXPECT_EQ(o.item<bool>(), want_any) << dtype_name(t) << " " << shape_str(shape);
    }
  }
  EXPECT_TRUE(all(ones({2, 2})).item<bool>());
  EXPECT_FALSE(all(Tensor::from_vector<float>({1, 0}, {2})).item<bool>());
}

TEST(AllAny, NaNIsTrueSoAllIsnanDetectsAnAllNaNTensor) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor all_nan = full({2, 3, 4}, nan);
  EXPECT_TRUE(all(all_nan).item<bool>());  // NaN is non-zero
  EXPECT_TRUE(all(isnan(all_nan)).item<bool>());
  Tensor one_real = clone(all_nan);
  copy_(select(select(select(one_real, 0, 1), 0, 2), 0, 3), Tensor::scalar<float>(0.5f));
  EXPECT_FALSE(all(isnan(one_real)).item<bool>());
  EXPECT_TRUE(any(isnan(one_real)).item<bool>());
}

TEST(Predicates, ShapeFunctionsNeedNoData) {
  testing::ShapeOnlyInterceptor shapes;
  InterceptorScope scope(&shapes);
  Tensor m = Tensor::meta(DType::F32, {2, 5});
  Tensor n = isnan(m);
  EXPECT_EQ(n.dtype(), DType::Bool);
  EXPECT_EQ(shape_str(n.sym_sizes()), "[2, 5]");
  EXPECT_EQ(all(n).dim(), 0);
  EXPECT_EQ(any(n).dim(), 0);
  EXPECT_EQ(shapes.ops, (std::vector<std::string>{"isnan", "all", "any"}));
}

}  // namespace
}  // namespace ingot
