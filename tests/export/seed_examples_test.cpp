// The examples of seed 001 (torch.export's programming model), one test each: the
// printed graph or error text, and the program run against eager.
#include <gtest/gtest.h>

#include <cmath>

#include "export_test_util.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/custom_op.h"
#include "ingot/export/export.h"
#include "ingot/nn/module.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"
#include "seed_programs.h"

namespace ingot {
namespace {

using testing::contains;
using testing::rand_tensor;
void expect_equal(const Tensor& a, const Tensor& b) {
  testing::expect_near_tensors(a, b);
}

// z = y + 7 with static y = 3 is folded: the graph adds the constant 10.
using testing::AddStatic;

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
  auto mod = ingot::runtime::ProgramModule(ep);
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
  expect_equal(ingot::runtime::ProgramModule{with_y}(x, std::optional<Tensor>(y)).at(0), mul(y, x));

  ExportedProgram without = export_(m, std::tuple{x, std::optional<Tensor>()}, o);
  const std::string p = without.print();
  EXPECT_TRUE(contains(p, "def forward(x: f32[3, 3], y = None)")) << p;
  EXPECT_TRUE(contains(p, "add: f32[3, 3] = add.Tensor(x, x, 1)")) << p;
  EXPECT_FALSE(contains(p, "mul")) << p;
  expect_equal(ingot::runtime::ProgramModule{without}(x, std::optional<Tensor>()).at(0), add(x, x));
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
  auto mod = ingot::runtime::ProgramModule(ep);
  Tensor pos = abs(rand_tensor({3}, 2)), neg = ingot::neg(pos);
  expect_equal(mod(pos).at(0), sin(pos));
  expect_equal(mod(neg).at(0), cos(neg));
}

// nonzero's size is data-dependent: branching on it needs check().
struct NonzeroBranch : nn::Module {
  bool use_check;
  explicit NonzeroBranch(bool c) : Module("NonzeroBranch"), use_check(c) {}
  Tensor forward(const Tensor& x) {
    Tensor nz = nonzero(x);
    if (use_check) check(nz.sym_size(0) > 0);
    if (nz.sym_size(0) > 0) return sin(x);
    return cos(x);
  }
};

TEST(SeedExamples, NonzeroNeedsCheckAndBecomesARuntimeAssert) {
  Tensor x = rand_tensor({3, 2}, 1);
  NonzeroBranch without(false);
  try {
    export_(without, std::tuple{x});
    FAIL() << "branching on an unbacked size must fail";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "u0")) << e.what();
    EXPECT_TRUE(contains(e.what(), "seed_examples_test.cpp")) << e.what();
    EXPECT_TRUE(contains(e.what(), "check")) << e.what();
  }
  NonzeroBranch with(true);
  ExportedProgram ep = export_(with, std::tuple{x});
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "nonzero: i64[u0, 2] = nonzero(arg0)")) << p;
  EXPECT_TRUE(contains(p, "assert")) << p;
  EXPECT_TRUE(contains(p, "sin")) << p;
  auto mod = ingot::runtime::ProgramModule(ep);
  testing::expect_near_tensors(mod(x).at(0), sin(x));
  try {
    mod(zeros({3, 2}));
    FAIL() << "the runtime assert must reject an all-zero input";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "u0")) << e.what();
  }
}

// torch.library.custom_op("mylib::sin") with a trivial fake.
const bool kRegisteredSin = [] {
  register_custom_op(
      "mylib::sin(Tensor x) -> Tensor",
      [](const OpArgs& a) {
        // A "foreign" kernel: computes element by element outside the op library.
        Tensor x = contiguous(a.tensor(0));
        Tensor out = Tensor::empty(x.sizes(), DType::F32);
        for (int64_t i = 0; i < x.numel(); ++i) out.data<float>()[i] = std::sin(x.data<float>()[i]);
        return std::vector<Tensor>{out};
      },
      [](const OpArgs& a) {
        return std::vector<OutputMeta>{{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
      });
  register_custom_op(
      "mylib::custom_nonzero(Tensor x) -> Tensor",
      [](const OpArgs& a) { return std::vector<Tensor>{nonzero(a.tensor(0))}; },
      [](const OpArgs& a) {
        return std::vector<OutputMeta>{
            {DType::I64, {new_dynamic_size(), SymInt(a.tensor(0).dim())}}};
      });
  register_custom_op("mylib::no_fake(Tensor x) -> Tensor",
                     [](const OpArgs& a) { return std::vector<Tensor>{clone(a.tensor(0))}; });
  return true;
}();

TEST(SeedExamples, CustomOpWithFakeRunsByName) {
  Tensor x = rand_tensor({4, 3}, 1);
  auto fn = [](const Tensor& t) { return call_custom_op("mylib::sin", {t})[0]; };
  ExportedProgram ep = export_(nullptr, fn, std::tuple{x});
  EXPECT_TRUE(contains(ep.print(), "sin: f32[4, 3] = mylib::sin(arg0)")) << ep.print();
  testing::expect_near_tensors(ingot::runtime::ProgramModule{ep}(x).at(0), sin(x), 1e-6);
}

TEST(SeedExamples, CustomOpWithoutFakeIsAnExportErrorNamingIt) {
  Tensor x = rand_tensor({2}, 1);
  auto fn = [](const Tensor& t) { return call_custom_op("mylib::no_fake", {t})[0]; };
  try {
    export_(nullptr, fn, std::tuple{x});
    FAIL();
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(contains(e.what(), "'mylib::no_fake'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "fake")) << e.what();
    EXPECT_TRUE(contains(e.what(), "seed_examples_test.cpp")) << e.what();
  }
}

TEST(SeedExamples, CustomNonzeroWithNewDynamicSize) {
  Tensor x = rand_tensor({3, 4}, 1);
  auto fn = [](const Tensor& t) { return call_custom_op("mylib::custom_nonzero", {t})[0]; };
  ExportedProgram ep = export_(nullptr, fn, std::tuple{x});
  EXPECT_TRUE(contains(ep.print(), "custom_nonzero: i64[u0, 2] = mylib::custom_nonzero(arg0)"))
      << ep.print();
  Tensor y = where(gt(x, Scalar(0.5)), x, zeros({3, 4}));
  testing::expect_near_tensors(ingot::runtime::ProgramModule{ep}(y).at(0), nonzero(y));
}

TEST(SeedExamples, UserTypeAsPytreeInput) {
  testing::SeedInput in{rand_tensor({10, 4}, 1), rand_tensor({10, 4}, 2)};
  auto fn = [](const testing::SeedInput& x) { return add(x.f, Scalar(1)); };
  ExportOptions o;
  o.input_names = {"x"};
  ExportedProgram ep = export_(nullptr, fn, std::tuple{in}, o);
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "def forward(x_f: f32[10, 4], x_p: f32[10, 4])")) << p;
  EXPECT_TRUE(contains(p, "add.Scalar(x_f, 1, 1)")) << p;
  testing::SeedInput other{rand_tensor({10, 4}, 3), rand_tensor({10, 4}, 4)};
  testing::expect_near_tensors(ingot::runtime::ProgramModule{ep}(other).at(0),
                               add(other.f, Scalar(1)));
}

// Buffers may be updated (functionalised into BUFFER_MUTATION); parameters may not.
using testing::Counter;

TEST(SeedExamples, BufferUpdateIsAMutationOutputSeenByTheNextCall) {
  Counter m;
  Tensor x = rand_tensor({3}, 1);
  ExportedProgram ep = export_(m, std::tuple{x});
  const std::string p = ep.print();
  EXPECT_TRUE(contains(p, "b_count: BUFFER target='count'")) << p;
  EXPECT_TRUE(contains(p, "p_weight: PARAMETER target='weight'")) << p;
  EXPECT_TRUE(contains(p, "BUFFER_MUTATION target='count'")) << p;
  // The eager model is untouched: real tensors back in its slots, count still zero.
  EXPECT_TRUE(m.count->has_storage());
  testing::expect_near_tensors(*m.count, zeros({3}));
  auto mod = ingot::runtime::ProgramModule(ep);
  testing::expect_near_tensors(mod(x).at(0), add(x, Scalar(1)));
  testing::expect_near_tensors(mod(x).at(0), add(x, Scalar(2)));
  testing::expect_near_tensors(mod.buffer("count"), full({3}, 2.0));
}

struct UpdatesParameter : nn::Module {
  Tensor* weight;
  UpdatesParameter() : Module("UpdatesParameter") {
    weight = register_parameter("weight", ones({3}));
  }
  Tensor forward(const Tensor& x) {
    mul_(*weight, Scalar(2));
    return add(x, *weight);
  }
};

TEST(SeedExamples, ParameterUpdateIsAnError) {
  UpdatesParameter m;
  try {
    export_(m, std::tuple{rand_tensor({3}, 1)});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "parameter 'weight' is updated in place by 'mul_.Scalar'"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "seed_examples_test.cpp")) << e.what();
  }
  EXPECT_TRUE(m.weight->has_storage());  // restored after the failed trace
}

}  // namespace
}  // namespace ingot
