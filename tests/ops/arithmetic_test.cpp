#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

using testing::reference_binary;

struct Case {
  IntShape a, b, out;
};

const Case kShapes[] = {
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}, {2, 3, 4}}, {{3, 1}, {1, 5}, {3, 5}},
    {{}, {2, 2}, {2, 2}},              {{0, 3}, {3}, {0, 3}},      {{1}, {1}, {1}},
    {{70000}, {70000}, {70000}},  // large enough to run threaded
};

TEST(Arithmetic, MatchesReferenceForFloatDTypesWithViews) {
  std::mt19937 rng(7);
  for (DType t : testing::kFloatDTypes) {
    for (const Case& c : kShapes) {
      Tensor a = testing::random_tensor(c.a, t, rng), b = testing::random_tensor(c.b, t, rng, 0.5, 2);
      for (bool nc : {false, true}) {
        Tensor x = nc ? testing::noncontiguous_like(a) : a;
        Tensor y = nc ? testing::noncontiguous_like(b) : b;
        const double atol = testing::default_atol(t), rtol = testing::default_rtol(t);
        std::string what = fmt::format("{} {} {}", t, shape_str(c.a), nc ? "strided" : "");
        testing::expect_close(add(x, y, 2), reference_binary(a, b, c.out, [](double u, double v) { return u + 2 * v; }), atol * 4, rtol, "add " + what);
        testing::expect_close(sub(x, y), reference_binary(a, b, c.out, std::minus<>()), atol * 4, rtol, "sub " + what);
        testing::expect_close(mul(x, y), reference_binary(a, b, c.out, std::multiplies<>()), atol * 4, rtol, "mul " + what);
        testing::expect_close(div(x, y), reference_binary(a, b, c.out, std::divides<>()), atol * 4, rtol, "div " + what);
        EXPECT_EQ(add(x, y).sizes(), c.out);
      }
    }
  }
}

TEST(Arithmetic, IntegerOpsAndRoundingModes) {
  Tensor a = Tensor::from_vector<int64_t>({7, -7, 7, -7}, {4});
  Tensor b = Tensor::from_vector<int64_t>({2, 2, -2, -2}, {4});
  EXPECT_EQ(values(div(a, b, "floor")), (std::vector<double>{3, -4, -4, 3}));
  EXPECT_EQ(values(div(a, b, "trunc")), (std::vector<double>{3, -3, -3, 3}));
  EXPECT_EQ(div(a, b, "floor").dtype(), DType::I64);
  Tensor q = div(a, b);
  EXPECT_EQ(q.dtype(), DType::F32);  // true division promotes
  EXPECT_EQ(values(q), (std::vector<double>{3.5, -3.5, -3.5, 3.5}));
  EXPECT_THROW(div(a, Tensor::from_vector<int64_t>({0, 1, 1, 1}, {4}), "floor"), ValueError);
  EXPECT_THROW(div(a, b, "round"), ValueError);
  EXPECT_EQ(values(mul(a, 3)), (std::vector<double>{21, -21, 21, -21}));
}

TEST(Arithmetic, TypePromotionFollowsPyTorch) {
  Tensor i32 = Tensor::from_vector<int32_t>({1, 2}, {2});
  Tensor f16 = Tensor::from_vector<Half>({Half(1.f), Half(2.f)}, {2});
  Tensor f64_0d = Tensor::scalar<double>(1.5);
  Tensor u8 = Tensor::from_vector<uint8_t>({1, 2}, {2});
  Tensor i8 = Tensor::from_vector<int8_t>({1, 2}, {2});
  EXPECT_EQ(add(i32, 1).dtype(), DType::I32);        // int scalar keeps the tensor's type
  EXPECT_EQ(add(i32, 1.5).dtype(), DType::F32);      // float scalar -> default float
  EXPECT_EQ(add(f16, 1.5).dtype(), DType::F16);      // same category: tensor wins
  EXPECT_EQ(add(f16, f64_0d).dtype(), DType::F16);   // 0-d of same category loses
  EXPECT_EQ(add(i32, f64_0d).dtype(), DType::F64);   // 0-d of higher category wins
  EXPECT_EQ(add(u8, i8).dtype(), DType::I16);
  Tensor bools = Tensor::from_vector<bool>({true, false}, {2});
  EXPECT_EQ(add(bools, bools).dtype(), DType::Bool);
  EXPECT_EQ(add(bools, 1).dtype(), DType::I64);
  EXPECT_THROW(sub(bools, bools), DTypeError);
  EXPECT_EQ(values(add(i32, 1.5)), (std::vector<double>{2.5, 3.5}));
}

TEST(Arithmetic, BroadcastErrorNamesOpAndShapes) {
  Tensor a = Tensor::empty({2, 3}, DType::F32), b = Tensor::empty({4}, DType::F32);
  try {
    add(a, b);
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[add.Tensor] shapes [2, 3] and [4] cannot be broadcast: dim -1 is 3 vs 4");
  }
}

}  // namespace
}  // namespace ingot
