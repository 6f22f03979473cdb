// convolution (F.conv1d / F.conv2d without transposition) on hand-computed cases: bias,
// stride with padding, dilation with groups (depthwise), non-contiguous input, 16-bit;
// and the errors of bad input. (ExecuTorch's portable aten::convolution.out and XNNPACK
// check the same op on random data: tests/exporters/executorch_xnnpack_test.cpp.)
#include "ingot/ops/functional.h"
#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

TEST(Convolution, Conv1dWithBias) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 4});
  Tensor w = Tensor::from_vector<float>({2, 1}, {1, 1, 2});
  Tensor b = Tensor::from_vector<float>({0.5f}, {1});
  Tensor y = conv1d(x, w, b);
  EXPECT_EQ(y.sizes(), (IntShape{1, 1, 3}));
  EXPECT_EQ(values(y), (std::vector<double>{4.5, 7.5, 10.5}));  // 2 x[i] + x[i+1] + 0.5
}

TEST(Convolution, Conv2dStrideAndPadding) {
  Tensor x = Tensor::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 3, 3});
  Tensor w = ones({1, 1, 3, 3});
  Tensor y = conv2d(x, w, Tensor(), {2, 2}, {1, 1});
  EXPECT_EQ(y.sizes(), (IntShape{1, 1, 2, 2}));
  // Each output sums the 2x2 corner block its padded window covers.
  EXPECT_EQ(values(y), (std::vector<double>{0 + 1 + 3 + 4, 1 + 2 + 4 + 5, 3 + 4 + 6 + 7,
                                            4 + 5 + 7 + 8}));
  // The input as a non-contiguous view (transposed storage) gives the same.
  Tensor xt = transpose(contiguous(transpose(x, 2, 3)), 2, 3);
  EXPECT_FALSE(xt.is_contiguous());
  EXPECT_EQ(values(conv2d(xt, w, Tensor(), {2, 2}, {1, 1})), values(y));
}

TEST(Convolution, DepthwiseWithDilationAndTwoOutputChannelsPerGroup) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 4});
  // groups 2, 2 output channels per group: [4, 1, 2]
  Tensor w = Tensor::from_vector<float>({1, 1, 1, -1, 1, -1, 0, 2}, {4, 1, 2});
  Tensor y = conv1d(x, w, Tensor(), 1, 0, 2, 2);  // taps x[i], x[i + 2]
  EXPECT_EQ(y.sizes(), (IntShape{1, 4, 2}));
  EXPECT_EQ(values(y), (std::vector<double>{4, 6, -2, -2, -20, -20, 60, 80}));
}

TEST(Convolution, HalfPrecisionAccumulatesInFloat) {
  Tensor x = to(Tensor::from_vector<float>({1, 2, 3, 4}, {1, 1, 4}), DType::F16);
  Tensor w = to(Tensor::from_vector<float>({0.5f, 0.25f}, {1, 1, 2}), DType::F16);
  Tensor y = conv1d(x, w);
  EXPECT_EQ(y.dtype(), DType::F16);
  EXPECT_EQ(values(y), (std::vector<double>{1, 1.75, 2.5}));
}

TEST(Convolution, RejectsBadInputs) {
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}), zeros({2, 4, 3, 3})), ShapeError);  // channels
  EXPECT_THROW(conv2d(zeros({1, 4, 5, 5}), zeros({3, 2, 3, 3}), Tensor(), {1, 1}, {0, 0},
                      {1, 1}, 2),
               ValueError);  // 3 outputs over 2 groups
  EXPECT_THROW(conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3})), ShapeError);  // too small
  EXPECT_THROW(conv1d(zeros({1, 1, 4}), zeros({1, 1, 2}), zeros({2})), ShapeError);  // bias
  EXPECT_THROW(conv1d(zeros({1, 1, 4}, DType::I64), zeros({1, 1, 2}, DType::I64)), DTypeError);
  EXPECT_THROW(conv2d(zeros({1, 1, 4, 4}), zeros({1, 1, 2, 2}), Tensor(), {0, 1}), ValueError);
}

}  // namespace
}  // namespace ingot
