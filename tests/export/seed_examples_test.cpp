// The examples of seed 001 (torch.export's programming model), one test each: the
// printed graph or error text, and the program run against eager.
#include <gtest/gtest.h>

#include "ingot/export/control_flow.h"
#include "ingot/export/export.h"
#include "ingot/nn/module.h"
#include "ingot/ops/functional.h"
#include "export_test_util.h"

namespace ingot {
namespace {

using testing::contains;
using testing::rand_tensor;
void expect_equal(const Tensor& a, const Tensor& b) { testing::expect_near_tensors(a, b); }

// z = y + 7 with static y = 3 is folded: the graph adds the constant 10.
struct AddStatic : nn::Module {
  AddStatic() : Module("AddStatic") {}
  Tensor forward(const Tensor& x, int y) {
    int z = y + 7;
    return add(x, Scalar(z));
  }
};

TEST(SeedExamples, StaticValuesAreFoldedIntoTheGraph) {
  AddStatic m;
  Tensor x = rand_tensor({1}, 1);
  ExportOptions o;
  o.input_names = {"x", "y"};
  ExportedProgram ep = export_(m, std::tuple{x, 3}, o);
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "add: f32[1] = add.Scalar(x, 10, 1)")) << p;
  EXPECT_TRUE(contains(p, "y = 3")) << p;
  ASSERT_EQ(ep.graph->nodes().size(), 1u) << p;
  auto mod = ep.module();
  Tensor x2 = rand_tensor({1}, 2);
  expect_equal(mod(x2, 3).at(0), add(x2, Scalar(10)));
  try {
    mod(x2, 4);
    FAIL() << "a different static value must be rejected";
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "input 'y' was specialised to 3")) << e.what();
  }
}

// An optional input: passed -> mul branch; not passed -> specialised to None.
struct OptionalInput : nn::Module {
  OptionalInput() : Module("OptionalInput") {}
  Tensor forward(const Tensor& x, const std::optional<Tensor>& y) {
    if (y) return mul(*y, x);
    return add(x, x);
  }
};

TEST(SeedExamples, OptionalInputPassedOrSpecialisedToNone) {
  OptionalInput m;
  Tensor x = rand_tensor({3, 3}, 1), y = rand_tensor({3, 3}, 2);
  ExportOptions o;
  o.input_names = {"x", "y"};
  ExportedProgram with_y = export_(m, std::tuple{x, std::optional<Tensor>(y)}, o);
  EXPECT_TRUE(contains(with_y.print(), "mul: f32[3, 3] = mul.Tensor(y, x)")) << with_y.print();
  expect_equal(with_y.module()(x, std::optional<Tensor>(y)).at(0), mul(y, x));

  ExportedProgram without = export_(m, std::tuple{x, std::optional<Tensor>()}, o);
  const std::string p = without.print();
  EXPECT_TRUE(contains(p, "def forward(x: f32[3, 3], y = None)")) << p;
  EXPECT_TRUE(contains(p, "add: f32[3, 3] = add.Tensor(x, x, 1)")) << p;
  EXPECT_FALSE(contains(p, "mul")) << p;
  expect_equal(without.module()(x, std::optional<Tensor>()).at(0), add(x, x));
}

// Branching in C++ on data is a data-dependent error naming the expression and line.
struct DataDependentIf : nn::Module {
  DataDependentIf() : Module("DataDependentIf") {}
  Tensor forward(const Tensor& x) {
    if (item_bool(gt(sum(x), Scalar(0)))) return sin(x);
    return cos(x);
  }
};

TEST(SeedExamples, DataDependentIfIsAnErrorSuggestingCond) {
  DataDependentIf m;
  Tensor x = rand_tensor({3}, 1);
  try {
    export_(m, std::tuple{x});
    FAIL() << "expected a data-dependent error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "u0")) << msg;
    EXPECT_TRUE(contains(msg, "seed_examples_test.cpp")) << msg;
    EXPECT_TRUE(contains(msg, "cond")) << msg;
  }
}

struct WithCond : nn::Module {
  WithCond() : Module("WithCond") {}
  Tensor forward(const Tensor& x) {
    return cond(
        gt(sum(x), Scalar(0)), [](const TensorList& in) { return TensorList{sin(in[0])}; },
        [](const TensorList& in) { return TensorList{cos(in[0])}; }, {x})[0];
  }
};

TEST(SeedExamples, CondTracesBothBranches) {
  WithCond m;
  Tensor x = rand_tensor({3}, 1);
  ExportedProgram ep = export_(m, std::tuple{x});
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "= cond(gt")) << p;
  EXPECT_TRUE(contains(p, "sin(arg0)")) << p;
  EXPECT_TRUE(contains(p, "cos(arg0)")) << p;
  auto mod = ep.module();
  Tensor pos = abs(rand_tensor({3}, 2)), neg = ingot::neg(pos);
  expect_equal(mod(pos).at(0), sin(pos));
  expect_equal(mod(neg).at(0), cos(neg));
}

}  // namespace
}  // namespace ingot
