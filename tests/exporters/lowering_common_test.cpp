// The translation helpers ONNX and OpenVINO share (exporters/lowering/translate_common.h):
// dims and indices normalised as Python does, transpose.int's permutation, the float
// compute type of 16-bit composites. Their use in every translation is covered by the
// ONNX Runtime and OpenVINO conformance tests.
#include <gtest/gtest.h>

#include "ingot/exporters/lowering/translate_common.h"

namespace ingot::exporters::lowering {
namespace {

TEST(LoweringCommon, NormalizeDimAndIndex) {
  EXPECT_EQ(normalize_dim(-1, 4), 3);
  EXPECT_EQ(normalize_dim(2, 4), 2);
  EXPECT_EQ(normalize_dim(-1, 0), 0);  // a 0-d tensor wraps as one dim
  const sym::Expr n = sym::symbol("n");
  EXPECT_EQ(normalize_index(sym::integer(-1), n).str(), sym::add(sym::integer(-1), n).str());
  EXPECT_EQ(normalize_index(sym::integer(2), n).str(), "2");
}

TEST(LoweringCommon, SwapPermutation) {
  EXPECT_EQ(swap_permutation(4, 1, -1), (std::vector<int64_t>{0, 3, 2, 1}));
  EXPECT_EQ(swap_permutation(2, 0, 0), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(swap_permutation(0, 0, 1).empty());
}

TEST(LoweringCommon, OpmathComputesSixteenBitFloatsInFloat) {
  EXPECT_EQ(opmath(DType::F16), DType::F32);
  EXPECT_EQ(opmath(DType::BF16), DType::F32);
  EXPECT_EQ(opmath(DType::F32), DType::F32);
  EXPECT_EQ(opmath(DType::I64), DType::I64);
}

}  // namespace
}  // namespace ingot::exporters::lowering
