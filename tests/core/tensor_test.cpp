#include "ingot/core/tensor.h"

#include <gtest/gtest.h>

namespace ingot {
namespace {

TEST(Tensor, EmptyIsContiguousWithRowMajorStrides) {
  Tensor t = Tensor::empty({2, 3, 4}, DType::F32);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides(), (IntShape{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.nbytes(), 96u);
}

TEST(Tensor, FromVectorAndItem) {
  Tensor t = Tensor::from_vector<int64_t>({7}, {});
  EXPECT_EQ(t.dim(), 0);
  EXPECT_EQ(t.item<int64_t>(), 7);
  EXPECT_THROW(Tensor::from_vector<float>({1, 2, 3}, {2, 2}), ShapeError);
  EXPECT_THROW(Tensor::empty({2, 2}, DType::F32).item<float>(), ValueError);
}

TEST(Tensor, AsStridedViewSharesStorageAndChecksBounds) {
  Tensor t = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor tr = t.as_strided({3, 2}, {1, 3}, 0);  // transpose
  EXPECT_TRUE(tr.shares_storage_with(t));
  EXPECT_FALSE(tr.is_contiguous());
  EXPECT_EQ(tr.to_string(), "Tensor(float32, [3, 2], [0, 3, 1, 4, 2, 5])");
  EXPECT_THROW(t.as_strided({3, 3}, {3, 1}, 0), ShapeError);
}

TEST(Tensor, WrapDimNamesOpAndRange) {
  Tensor t = Tensor::empty({2, 3}, DType::F32);
  EXPECT_EQ(t.wrap_dim(-1), 1);
  try {
    t.wrap_dim(2, "softmax");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[softmax] dim 2 is out of range"), std::string::npos);
  }
}

TEST(Tensor, SizeOneAndZeroDimsAreContiguous) {
  Tensor t = Tensor::empty({0, 3}, DType::F32);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 0);
  Tensor u = Tensor::empty({4, 1}, DType::F32).as_strided({4, 1}, {1, 7}, 0);
  EXPECT_TRUE(u.is_contiguous());
}

TEST(Tensor, MetaTensorHasNoData) {
  Tensor m = Tensor::meta(DType::BF16, {SymInt(2), SymInt(5)});
  EXPECT_FALSE(m.has_storage());
  EXPECT_EQ(m.numel(), 10);
  EXPECT_THROW(m.raw_data(), ValueError);
}

TEST(DType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promote_types(DType::U8, DType::I8), DType::I16);
  EXPECT_EQ(promote_types(DType::F16, DType::BF16), DType::F32);
  EXPECT_EQ(promote_types(DType::I64, DType::F16), DType::F16);
  EXPECT_EQ(promote_types(DType::Bool, DType::I32), DType::I32);
  EXPECT_EQ(promote_types(DType::F32, DType::F64), DType::F64);
  EXPECT_EQ(parse_dtype("BF16"), DType::BF16);
  EXPECT_THROW(parse_dtype("float8"), DTypeError);
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(float(Half(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(float(Half(70000.0f))));
  EXPECT_TRUE(std::isnan(float(Half(NAN))));
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(float(Half(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(float(Half(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);
  // Exhaustive: every finite half converts to float and back unchanged.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Half h = Half::from_bits(uint16_t(b));
    if (((b >> 10) & 0x1f) == 0x1f) continue;
    EXPECT_EQ(Half(float(h)).bits, h.bits) << b;
  }
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNaN) {
  EXPECT_EQ(float(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(float(BFloat16(1.0f + 0x1p-8f)), 1.0f);  // tie -> even
  EXPECT_EQ(float(BFloat16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  EXPECT_TRUE(std::isnan(float(BFloat16(NAN))));
}

}  // namespace
}  // namespace ingot
