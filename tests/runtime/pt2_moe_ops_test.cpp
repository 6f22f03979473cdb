// The registry ops that MoE .pt2 archives need (transformers' grouped_mm_fallback and
// histc), on hand-computed cases: empty experts, rows past the last offset, bad offsets;
// histc's range from the data, the max element in the last bin, values outside the range
// and NaN not counted. The fixture archives (pt2_run_test) check them against torch.
#include <gtest/gtest.h>

#include <cmath>

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

Tensor call1(const char* op, std::vector<Value> args) {
  return call_op(OpRegistry::instance().get(op), std::move(args)).at(0);
}

std::vector<float> values(const Tensor& t) {
  const Tensor c = contiguous(t);
  return std::vector<float>(c.data<float>(), c.data<float>() + c.numel());
}

TEST(Pt2MoeOps, GroupedMmMultipliesEachExpertsRows) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  const Tensor w = Tensor::from_vector<float>({1, 0, 0, 1, 9, 9, 9, 9, 2, 1, 0, 3}, {3, 2, 2});
  const Tensor offs = Tensor::from_vector<int32_t>({2, 2, 4}, {3});  // expert 1 has no rows
  const Tensor y = call1("transformers::grouped_mm_fallback", {x, w, offs});
  // rows 0-1 · identity, rows 2-3 · [[2, 1], [0, 3]], row 4 past offs[-1]: 0
  EXPECT_EQ(values(y), (std::vector<float>{1, 2, 3, 4, 10, 23, 14, 31, 0, 0}));
  // The transposed weight torch passes (a strided view) gives the same.
  const Tensor wt = transpose(contiguous(transpose(w, 1, 2)), 1, 2);
  EXPECT_EQ(values(call1("transformers::grouped_mm_fallback", {x, wt, offs})), values(y));
  const Tensor bad = Tensor::from_vector<int64_t>({3, 2, 4}, {3});
  try {
    call1("transformers::grouped_mm_fallback", {x, w, bad});
    FAIL() << "decreasing offsets accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("non-decreasing"), std::string::npos) << e.what();
  }
}

TEST(Pt2MoeOps, HistcCountsLikeTorch) {
  const Tensor x = Tensor::from_vector<float>({0, 1, 1, 3, 3, -1, 5, NAN}, {8});
  EXPECT_EQ(values(call1("histc", {x, int64_t(4), Scalar(0), Scalar(3)})),
            (std::vector<float>{1, 2, 0, 2}));
  // min == max: the data's range.
  const Tensor y = Tensor::from_vector<float>({1, 2, 2, 4}, {4});
  EXPECT_EQ(values(call1("histc", {y, int64_t(3), Scalar(0), Scalar(0)})),
            (std::vector<float>{1, 2, 1}));
  // ... widened by 1 when the data are all equal.
  const Tensor z = Tensor::from_vector<float>({2, 2}, {2});
  EXPECT_EQ(values(call1("histc", {z, int64_t(2), Scalar(0), Scalar(0)})),
            (std::vector<float>{0, 2}));
  EXPECT_THROW(call1("histc", {x, int64_t(4), Scalar(3), Scalar(0)}), ValueError);
}

}  // namespace
}  // namespace ingot
