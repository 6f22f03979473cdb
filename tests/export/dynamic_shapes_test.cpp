// Dynamic shapes: named Dims, AUTO inference, guards the spec must imply, input checks
// at run time; map / while_loop; writes through views of buffers.
#include <gtest/gtest.h>

#include "export_test_util.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/export.h"
#include "ingot/export/passes.h"
#include "ingot/nn/module.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot {
namespace {

using testing::contains;
using testing::expect_near_tensors;
using testing::rand_tensor;

ExportOptions batch_dynamic(const Dim& batch) {
  ExportOptions o;
  o.input_names = {"x"};
  o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, batch}})});
  return o;
}

TEST(DynamicShapes, NamedDimRunsAtOtherSizesAndChecksItsRange) {
  auto fn = [](const Tensor& x) { return mul(sum(x, {1}), Scalar(2)); };
  ExportedProgram ep =
      export_(nullptr, fn, std::tuple{rand_tensor({4, 3}, 1)}, batch_dynamic(Dim("batch", 1, 64)));
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "def forward(x: f32[batch, 3])")) << p;
  EXPECT_TRUE(contains(p, "batch: [1, 64]")) << p;
  auto mod = ingot::runtime::ProgramModule(ep);
  for (int64_t b : {1, 7, 64}) {
    Tensor x = rand_tensor({b, 3}, uint32_t(b));
    expect_near_tensors(mod(x).at(0), fn(x), 1e-6);
  }
  try {
    mod(rand_tensor({100, 3}, 1));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "[runtime] input 'x' dim 0 is 100, outside batch in [1, 64]");
  }
  try {
    mod(rand_tensor({5, 4}, 1));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "input 'x' dim 1 is 4, but the program was exported for 3"))
        << e.what();
  }
}

// Code that depends on the exact size specialises the Dim: an error naming the line.
struct SizeSwitch : nn::Module {
  SizeSwitch() : Module("SizeSwitch") {}
  Tensor forward(const Tensor& x) {
    if (x.sym_size(0) == 4) return add(x, Scalar(1));  // the line the error names
    return x;
  }
};

TEST(DynamicShapes, SpecialisationOfANamedDimIsAnErrorWithTheFix) {
  SizeSwitch m;
  const int line = __LINE__ - 7;
  try {
    export_(m, std::tuple{rand_tensor({4, 3}, 1)}, batch_dynamic(Dim("batch", 1, 64)));
    FAIL();
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(contains(msg, "'batch' (x dim 0) was specialised to 4 at dynamic_shapes_test.cpp:" +
                                  std::to_string(line)))
        << msg;
    EXPECT_TRUE(contains(msg, "Dim::static_()")) << msg;
  }
  // AUTO infers the specialisation instead of failing.
  ExportOptions o;
  o.dynamic = true;
  ExportedProgram ep = export_(m, std::tuple{rand_tensor({4, 3}, 1)}, o);
  EXPECT_TRUE(contains(ep.print(), "arg0: f32[4, s1]")) << ep.print();
  // Deferred: no export error; the guard is checked when the program runs.
  ExportOptions d = batch_dynamic(Dim("batch", 1, 64));
  d.prefer_deferred_runtime_asserts_over_guards = true;
  ExportedProgram deferred = export_(m, std::tuple{rand_tensor({4, 3}, 1)}, d);
  Tensor x4 = rand_tensor({4, 3}, 2);
  expect_near_tensors(ingot::runtime::ProgramModule{deferred}(x4).at(0), add(x4, Scalar(1)));
  EXPECT_THROW(ingot::runtime::ProgramModule{deferred}(rand_tensor({5, 3}, 1)), ShapeError);
}

TEST(DynamicShapes, SameDimMeansEqualSizesAndRangeGuardsSuggestASpec) {
  auto fn = [](const Tensor& a, const Tensor& b) { return add(a, b); };
  Dim n("n", 1, 32);
  ExportOptions o;
  o.dynamic_shapes =
      DynamicShapes::tuple({DynamicShapes::tensor({{0, n}}), DynamicShapes::tensor({{0, n}})});
  ExportedProgram ep =
      export_(nullptr, fn, std::tuple{rand_tensor({5, 2}, 1), rand_tensor({5, 2}, 2)}, o);
  auto mod = ingot::runtime::ProgramModule(ep);
  expect_near_tensors(mod(rand_tensor({9, 2}, 1), rand_tensor({9, 2}, 1)).at(0),
                      mul(rand_tensor({9, 2}, 1), Scalar(2)), 1e-6);
  try {
    mod(rand_tensor({9, 2}, 1), rand_tensor({8, 2}, 1));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "must equal the other sizes marked 'n'")) << e.what();
  }
  // Two different Dims that the code forces equal: the error says to share the Dim.
  ExportOptions two;
  two.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, Dim("a", 2, 32)}}),
                                             DynamicShapes::tensor({{0, Dim("b", 2, 32)}})});
  try {
    export_(nullptr, fn, std::tuple{rand_tensor({5, 2}, 1), rand_tensor({5, 2}, 2)}, two);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "use the same Dim")) << e.what();
  }
}

TEST(DynamicShapes, MapAndWhileLoop) {
  auto fn = [](const Tensor& xs, const Tensor& y) {
    Tensor mapped =
        map([](const TensorList& in) { return TensorList{add(mul(in[0], in[1]), Scalar(1))}; },
            {xs}, {y})[0];
    // Doubles the counter until it exceeds the limit.
    Tensor limit = full({}, 10.0);
    Tensor counted =
        while_loop([](const TensorList& s) { return TensorList{lt(s[0], s[1])}; },
                   [](const TensorList& s) { return TensorList{mul(s[0], Scalar(2))}; },
                   {full({}, 1.0)}, {limit})[0];
    return std::tuple{mapped, counted};
  };
  Tensor xs = rand_tensor({4, 3}, 1), y = rand_tensor({3}, 2);
  ExportOptions o;
  o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, Dim("n", 1, 16)}}), {}});
  ExportedProgram ep = export_(nullptr, fn, std::tuple{xs, y}, o);
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "map: f32[n, 3] = map(1, arg0, arg1)")) << p;
  EXPECT_TRUE(contains(p, "while_loop")) << p;
  Tensor xs2 = rand_tensor({6, 3}, 3);
  auto out = ingot::runtime::ProgramModule{ep}(xs2, y);
  expect_near_tensors(out.at(0), add(mul(xs2, y), Scalar(1)), 1e-6);
  expect_near_tensors(out.at(1), full({}, 16.0));
}

// Writing into a slice of a buffer becomes slice_scatter + BUFFER_MUTATION, and a view
// read after the write sees the new data.
struct RingWriter : nn::Module {
  Tensor* cache;
  RingWriter() : Module("RingWriter") { cache = register_buffer("cache", zeros({4, 3})); }
  Tensor forward(const Tensor& x) {
    Tensor row = slice(*cache, 0, 1, 2);  // a view taken before the write
    copy_(slice(*cache, 0, 1, 2), x);
    return add(row, Scalar(0));
  }
};

TEST(DynamicShapes, SliceAssignmentThroughAViewOfABuffer) {
  RingWriter m;
  Tensor x = rand_tensor({1, 3}, 1);
  ExportedProgram ep = export_(m, std::tuple{x});
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "slice_scatter")) << p;
  EXPECT_TRUE(contains(p, "BUFFER_MUTATION target='cache'")) << p;
  auto mod = ingot::runtime::ProgramModule(ep);
  expect_near_tensors(mod(x).at(0), x);
  expect_near_tensors(slice(mod.buffer("cache"), 0, 1, 2), x);
  expect_near_tensors(slice(mod.buffer("cache"), 0, 0, 1), zeros({1, 3}));
}

TEST(DynamicShapes, CommonSubexpressionsAreMerged) {
  auto fn = [](const Tensor& x) { return add(exp(x), exp(x)); };
  ExportedProgram ep = export_(nullptr, fn, std::tuple{rand_tensor({3}, 1)});
  EXPECT_EQ(ep.graph->nodes().size(), 3u);
  EXPECT_EQ(eliminate_common_subexpressions(ep), 1u);
  EXPECT_EQ(ep.graph->nodes().size(), 2u);
  ep.verify();
  Tensor x = rand_tensor({3}, 2);
  expect_near_tensors(ingot::runtime::ProgramModule{ep}(x).at(0), add(exp(x), exp(x)), 1e-6);
}

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

TEST(Passes, DecomposeToCoreReplacesCompositesAndKeepsSemantics) {
  auto fn = [](const Tensor& x) {
    Tensor y = softmax(mul(x, Scalar(2)), -1);
    return cond(
        gt(sum(x), Scalar(0)),
        [](const TensorList& in) { return TensorList{log_softmax(in[0], 0)}; },
        [](const TensorList& in) { return TensorList{in[0]}; }, {y})[0];
  };
  Tensor x = testing::rand_tensor({3, 5}, 1);
  ExportOptions o;
  o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, Dim("rows", 1, 8)}})});
  ExportedProgram ep = export_(nullptr, fn, std::tuple{x}, o);
  ASSERT_TRUE(testing::contains(ep.print(), "softmax.int")) << ep.print();
  decompose_to_core(ep);
  const std::string p = ep.print();
  EXPECT_FALSE(testing::contains(p, "softmax.int")) << p;
  EXPECT_TRUE(testing::contains(p, "_softmax")) << p;
  EXPECT_TRUE(testing::contains(p, "_log_softmax")) << p;
  EXPECT_TRUE(testing::contains(p, "dynamic_shapes_test.cpp")) << p;  // user lines kept
  for (int64_t rows : {1, 4, 8}) {
    Tensor xi = testing::rand_tensor({rows, 5}, uint32_t(rows));
    testing::expect_near_tensors(ingot::runtime::ProgramModule{ep}(xi).at(0), fn(xi), 1e-6);
  }
}

}  // namespace
}  // namespace ingot
