// Module-state rules of seed 001: uninitialised state, non-buffer tensor attributes,
// static attributes, mutation inside cond branches, user-input mutation.
#include <gtest/gtest.h>

#include "export_test_util.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/export.h"
#include "ingot/nn/layers.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot {
namespace {

using testing::contains;
using testing::expect_near_tensors;
using testing::rand_tensor;

TEST(StateRules, ReadingAParameterThatWasNeverLoadedIsAnError) {
  nn::Linear layer(3, 2, true, DType::F32);  // placeholders: no data until loaded
  try {
    export_(layer, std::tuple{rand_tensor({4, 3}, 1)});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "parameter 'weight' is read")) << e.what();
    EXPECT_TRUE(contains(e.what(), "never initialised")) << e.what();
  }
}

// A plain tensor member (not a buffer) is lifted as a constant; writing it is an error.
struct TensorAttribute : nn::Module {
  Tensor scale = full({3}, 2.0);
  int calls = 0;  // a static attribute: may change during tracing, baked in
  TensorAttribute() : Module("TensorAttribute") {}
  Tensor forward(const Tensor& x, bool write) {
    ++calls;
    if (write) mul_(scale, Scalar(2));
    return mul(x, Scalar(double(calls)));
  }
};

TEST(StateRules, TensorAttributesAreConstantsAndMayNotBeWritten) {
  TensorAttribute m;
  Tensor x = rand_tensor({3}, 1);
  ExportedProgram ep = export_(m, std::tuple{x, false});
  EXPECT_TRUE(contains(ep.print(), "mul.Scalar(arg0, 1)")) << ep.print();  // calls baked in
  EXPECT_EQ(m.calls, 1);
  try {
    export_(m, std::tuple{x, true});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "writes in place into a tensor that is not a traced value"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "make it a buffer")) << e.what();
  }
  expect_near_tensors(m.scale, full({3}, 2.0));  // the eager attribute is untouched
}

TEST(StateRules, ABranchMutatingItsInputIsAnError) {
  auto fn = [](const Tensor& x) {
    return cond(
        gt(sum(x), Scalar(0)),
        [](const TensorList& in) { return TensorList{add_(in[0], Scalar(1))}; },
        [](const TensorList& in) { return TensorList{clone(in[0])}; }, {x})[0];
  };
  try {
    export_(nullptr, fn, std::tuple{rand_tensor({3}, 1)});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "writes in place into an input of a cond true branch"))
        << e.what();
  }
}

TEST(StateRules, UserInputMutationIsAnOutputAndAppliedToTheCallersTensor) {
  auto fn = [](const Tensor& cache, const Tensor& x) {
    copy_(slice(cache, 0, 0, 1), x);
    return sum(cache);
  };
  Tensor cache = zeros({3, 2}), x = rand_tensor({1, 2}, 1);
  ExportOptions o;
  o.input_names = {"cache", "x"};
  ExportedProgram ep = export_(nullptr, fn, std::tuple{cache, x}, o);
  EXPECT_TRUE(contains(ep.print(), "USER_INPUT_MUTATION target='cache'")) << ep.print();
  expect_near_tensors(cache, zeros({3, 2}));  // export did not run the write
  Tensor mine = zeros({3, 2});
  Tensor total = ingot::runtime::ProgramModule{ep}(mine, x).at(0);
  expect_near_tensors(slice(mine, 0, 0, 1), x);
  expect_near_tensors(total, sum(x), 1e-6);
}

}  // namespace
}  // namespace ingot
