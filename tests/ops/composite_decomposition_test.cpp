// Composite ops decomposed once in ops/ for every graph backend (histc,
// transformers::grouped_mm_fallback): the decomposition, run eagerly on the same
// arguments, equals the CPU kernel exactly, on the hand-computed cases of
// tests/runtime/pt2_moe_ops_test.cpp and on random data (values on bin edges included).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

// The kernel's and the decomposition's result for `op` on `args`.
std::pair<Tensor, Tensor> kernel_and_decomposition(const char* op, std::vector<Value> args) {
  const OpDef& def = OpRegistry::instance().get(op);
  EXPECT_TRUE(bool(def.decomposition_fn)) << op << " has no decomposition";
  Tensor kernel = call_op(def, args).at(0);
  Tensor decomposed = def.decomposition_fn(normalize_args(def, std::move(args))).at(0);
  return {kernel, decomposed};
}

std::vector<double> values(const Tensor& t) {
  const Tensor c = contiguous(to(t, DType::F64));
  return std::vector<double>(c.data<double>(), c.data<double>() + c.numel());
}

void expect_equal(const char* op, std::vector<Value> args) {
  auto [kernel, decomposed] = kernel_and_decomposition(op, std::move(args));
  EXPECT_EQ(decomposed.dtype(), kernel.dtype()) << op;
  EXPECT_EQ(decomposed.sizes(), kernel.sizes()) << op;
  EXPECT_EQ(values(decomposed), values(kernel)) << op;
}

TEST(CompositeDecomposition, HistcEqualsTheKernel) {
  const Tensor edges = Tensor::from_vector<float>({0, 1, 1, 3, 3, -1, 5, NAN}, {8});
  expect_equal("histc", {edges, int64_t(4), Scalar(0), Scalar(3)});  // outside, NaN, max
  expect_equal("histc", {Tensor::from_vector<float>({1, 2, 2, 4}, {4}), int64_t(3), Scalar(0),
                         Scalar(0)});  // the data's range
  expect_equal("histc", {Tensor::from_vector<float>({2, 2}, {2}), int64_t(2), Scalar(0),
                         Scalar(0)});  // one value: widened by 1
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> tenths(-20, 120);
  std::vector<float> f;
  std::vector<double> d;
  for (int i = 0; i < 500; ++i) {
    f.push_back(float(tenths(rng)) / 10.0f);  // many values exactly on bin edges
    d.push_back(double(tenths(rng)) / 7.0);
  }
  const Tensor xf = Tensor::from_vector<float>(f, {20, 25});
  expect_equal("histc", {xf, int64_t(10), Scalar(0.0), Scalar(10.0)});
  expect_equal("histc", {xf, int64_t(7), Scalar(0.3), Scalar(9.1)});
  expect_equal("histc", {xf, int64_t(13), Scalar(0), Scalar(0)});
  expect_equal("histc",
               {Tensor::from_vector<double>(d, {500}), int64_t(9), Scalar(0.1), Scalar(12.7)});
  expect_equal("histc", {to(xf, DType::BF16), int64_t(6), Scalar(0.0), Scalar(6.0)});
}

TEST(CompositeDecomposition, GroupedMmEqualsTheKernel) {
  const Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  const Tensor w = Tensor::from_vector<float>({1, 0, 0, 1, 9, 9, 9, 9, 2, 1, 0, 3}, {3, 2, 2});
  // expert 1 has no rows, row 4 is past offs[-1]
  expect_equal("transformers::grouped_mm_fallback",
               {x, w, Tensor::from_vector<int32_t>({2, 2, 4}, {3})});
  expect_equal("transformers::grouped_mm_fallback",
               {x, w, Tensor::from_vector<int64_t>({0, 5, 5}, {3})});
  // bf16 operands and output (the kernel accumulates in float32, as the decomposition).
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<float> xs(6 * 8), ws(4 * 8 * 3);
  for (float& v : xs) v = float(small(rng));
  for (float& v : ws) v = float(small(rng)) / 2;
  expect_equal("transformers::grouped_mm_fallback",
               {to(Tensor::from_vector<float>(xs, {6, 8}), DType::BF16),
                to(Tensor::from_vector<float>(ws, {4, 8, 3}), DType::BF16),
                Tensor::from_vector<int64_t>({1, 1, 4, 6}, {4})});
}

}  // namespace
}  // namespace ingot
