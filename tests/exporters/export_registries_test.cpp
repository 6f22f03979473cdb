// The exporter framework's registries, through an exporter for a test backend
// ("regtest"): op and module patches apply only while its trace runs and are undone
// afterwards (also when the trace throws), node and program fixes rewrite the traced
// program, the skip table refuses with its reason, and the tool-version drift warning.
#include <gtest/gtest.h>

#include <fstream>

#include "../export/export_test_util.h"
#include "../models/fixture_path.h"
#include "ingot/export/control_flow.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/fixes.h"
#include "ingot/exporters/skips.h"
#include "ingot/exporters/tool_versions.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::exporters {
namespace {

using testing::contains;
using testing::rand_tensor;

class RegTestExporter final : public Exporter {
 public:
  std::string backend() const override { return "regtest"; }

 protected:
  std::unique_ptr<ExportArtifact> finish(ExportedProgram program, std::vector<std::string> notes,
                                         const NativeExportConfig&) override {
    program.verify();
    auto a = std::make_unique<NativeArtifact>();
    a->program = std::move(program);
    a->notes = std::move(notes);
    return a;
  }
};

// --- the test backend's registrations (each exercised below) ------------------------------

INGOT_REGISTER_OP_PATCH(regtest_sin_as_cos, "regtest", "sin", "test: a visible replacement",
                        [](OpImpl /*original*/) -> OpImpl {
                          return
                              [](const OpArgs& a) { return std::vector<Tensor>{cos(a.tensor(0))}; };
                        });

// exp(x) -> original exp(x) + 1: the factory's original still records the op.
INGOT_REGISTER_OP_PATCH(regtest_exp_plus_one, "regtest", "exp", "test: wraps the original",
                        [](OpImpl original) -> OpImpl {
                          return [original](const OpArgs& a) {
                            return std::vector<Tensor>{add(original(a).at(0), Scalar(1))};
                          };
                        });

struct Scaler : nn::Module {
  double factor = 3.0;
  bool fail = false;
  Scaler() : Module("Scaler") {}
  Tensor forward(const Tensor& x) {
    INGOT_CHECK(!fail, ValueError, "Scaler asked to fail");
    return mul(x, Scalar(factor));
  }
};

INGOT_REGISTER_MODULE_PATCH(regtest_scaler_doubles, "regtest", "Scaler",
                            "test: an export-time attribute",
                            [](nn::Module& m) -> std::function<void()> {
                              auto& s = static_cast<Scaler&>(m);
                              const double saved = s.factor;
                              s.factor = 2.0;
                              return [&s, saved] { s.factor = saved; };
                            });

// neg(x) -> mul.Scalar(x, -1), keeping the output value.
INGOT_REGISTER_NODE_FIX(regtest_neg_as_mul, "regtest", "neg", "test: rewrite one node",
                        [](ir::Graph&, const ir::Node& n) -> std::optional<NodeRewrite> {
                          ir::Node m = n;
                          m.target = "mul.Scalar";
                          m.args = {n.args[0], Scalar(int64_t(-1))};
                          NodeRewrite r;
                          r.replacement.push_back(std::move(m));
                          r.note = "neg -> mul";
                          return r;
                        });

// clone(x) -> x: forwards uses of the output to the input.
INGOT_REGISTER_NODE_FIX(regtest_drop_clone, "regtest", "clone", "test: forward an output",
                        [](ir::Graph&, const ir::Node& n) -> std::optional<NodeRewrite> {
                          NodeRewrite r;
                          r.forward[n.outputs[0]] = std::get<ir::TensorRef>(n.args[0]).id;
                          return r;
                        });

INGOT_REGISTER_PROGRAM_FIX(regtest_count_nodes, "regtest", "test: sees the whole program",
                           [](ExportedProgram& p) {
                             return std::vector<std::string>{
                                 std::to_string(p.graph->nodes().size()) + " nodes"};
                           });

INGOT_REGISTER_SKIP(regtest_unexportable, "Unexportable", "regtest", "*",
                    "test: forward takes a module as an argument; pass its tensors instead");

bool has_note(const ExportArtifact& a, const std::string& part) {
  for (const auto& n : a.notes) {
    if (contains(n, part)) return true;
  }
  return false;
}

TEST(ExporterPatches, OpPatchAppliesOnlyWhileItsBackendTraces) {
  auto fn = [](const Tensor& x) { return sin(x); };
  Tensor x = rand_tensor({3}, 1);
  auto a = RegTestExporter().export_fn(nullptr, fn, std::tuple{x}, NativeExportConfig());
  const std::string p = a->program.print();
  EXPECT_TRUE(contains(p, "cos(arg0)")) << p;
  EXPECT_FALSE(contains(p, "sin(")) << p;
  EXPECT_TRUE(has_note(*a, "patch regtest_sin_as_cos"));
  testing::expect_near_tensors(ingot::runtime::ProgramModule{a->program}(x).at(0), cos(x), 1e-6);
  // Eager calls and other backends keep the op.
  testing::expect_near_tensors(sin(x), fn(x));
  EXPECT_EQ(current_interceptor(), nullptr);
  auto native = NativeExporter().export_fn(nullptr, fn, std::tuple{x}, NativeExportConfig());
  EXPECT_TRUE(contains(native->program.print(), "sin(arg0)"));
}

TEST(ExporterPatches, OpPatchCanCallTheOriginal) {
  auto fn = [](const Tensor& x) { return exp(x); };
  Tensor x = rand_tensor({4}, 2);
  auto a = RegTestExporter().export_fn(nullptr, fn, std::tuple{x}, NativeExportConfig());
  const std::string p = a->program.print();
  EXPECT_TRUE(contains(p, "exp(arg0)")) << p;
  EXPECT_TRUE(contains(p, "add.Scalar(exp, 1, 1)")) << p;
  testing::expect_near_tensors(ingot::runtime::ProgramModule{a->program}(x).at(0),
                               add(exp(x), Scalar(1)), 1e-6);
}

TEST(ExporterPatches, OpPatchesAreRemovedWhenTheTraceThrows) {
  auto fn = [](const Tensor& x) {
    Tensor y = sin(x);
    INGOT_CHECK(false, ValueError, "user code failed");
    return y;
  };
  EXPECT_THROW(RegTestExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({2}, 1)},
                                           NativeExportConfig()),
               ValueError);
  EXPECT_EQ(current_interceptor(), nullptr);
  Tensor x = rand_tensor({2}, 3);
  testing::expect_near_tensors(sin(x), ingot::sin(x));
  EXPECT_FALSE(testing::contains(
      NativeExporter()
          .export_fn(
              nullptr, [](const Tensor& t) { return sin(t); }, std::tuple{x}, NativeExportConfig())
          ->program.print(),
      "cos"));
}

TEST(ExporterPatches, ModulePatchIsUndoneAfterTheExportAndOnError) {
  Scaler m;
  Tensor x = rand_tensor({3}, 4);
  auto a = RegTestExporter().export_fn(
      &m, [&m](const Tensor& t) { return m.forward(t); }, std::tuple{x}, NativeExportConfig());
  EXPECT_TRUE(contains(a->program.print(), "mul.Scalar(arg0, 2)")) << a->program.print();
  EXPECT_TRUE(has_note(*a, "patch regtest_scaler_doubles"));
  EXPECT_EQ(m.factor, 3.0);
  m.fail = true;
  EXPECT_THROW(
      RegTestExporter().export_fn(
          &m, [&m](const Tensor& t) { return m.forward(t); }, std::tuple{x}, NativeExportConfig()),
      ValueError);
  EXPECT_EQ(m.factor, 3.0);
  // The native backend has no patch for Scaler.
  m.fail = false;
  auto native = NativeExporter().export_fn(
      &m, [&m](const Tensor& t) { return m.forward(t); }, std::tuple{x}, NativeExportConfig());
  EXPECT_TRUE(contains(native->program.print(), "mul.Scalar(arg0, 3)")) << native->program.print();
}

TEST(ExporterFixes, NodeFixesRewriteAndForward) {
  auto fn = [](const Tensor& x) { return add(neg(x), clone(x)); };
  Tensor x = rand_tensor({5}, 5);
  auto a = RegTestExporter().export_fn(nullptr, fn, std::tuple{x}, NativeExportConfig());
  const std::string p = a->program.print();
  EXPECT_FALSE(contains(p, "neg(")) << p;
  EXPECT_FALSE(contains(p, "clone(")) << p;
  EXPECT_TRUE(contains(p, "mul.Scalar(arg0, -1)")) << p;
  EXPECT_TRUE(has_note(*a, "regtest_neg_as_mul: neg -> mul"));
  EXPECT_TRUE(has_note(*a, "regtest_count_nodes: 3 nodes"));
  testing::expect_near_tensors(ingot::runtime::ProgramModule{a->program}(x).at(0), zeros({5}),
                               1e-6);
}

TEST(ExporterFixes, NodeFixesReachSubgraphs) {
  auto fn = [](const Tensor& x) {
    return cond(
        gt(sum(x), Scalar(0)), [](const TensorList& in) { return TensorList{neg(in[0])}; },
        [](const TensorList& in) { return TensorList{clone(in[0])}; }, {x})[0];
  };
  Tensor x = abs(rand_tensor({3}, 6));
  auto a = RegTestExporter().export_fn(nullptr, fn, std::tuple{x}, NativeExportConfig());
  const std::string p = a->program.print();
  EXPECT_FALSE(contains(p, "neg(")) << p;
  testing::expect_near_tensors(ingot::runtime::ProgramModule{a->program}(x).at(0), neg(x), 1e-6);
  testing::expect_near_tensors(ingot::runtime::ProgramModule{a->program}(ingot::neg(x)).at(0),
                               ingot::neg(x), 1e-6);
}

// The real program fix: a bound on one input size becomes its range.
TEST(ExporterFixes, FoldBoundAssertsNarrowsTheRange) {
  auto fn = [](const Tensor& x) {
    check(x.sym_size(0) <= SymInt(16));
    return add(x, Scalar(1));
  };
  NativeExportConfig c;
  c.dynamic_shapes_json = R"({"x": {"0": {"name": "n", "min": 1, "max": 64}}})";
  auto a = NativeExporter().export_fn(nullptr, fn, std::tuple{rand_tensor({4, 2}, 7)}, c, {"x"});
  EXPECT_FALSE(contains(a->program.print(), "assert")) << a->program.print();
  EXPECT_EQ(a->program.range_constraints.at("n").range.hi, 16);
  EXPECT_TRUE(has_note(*a, "fold_bound_asserts: n <= 16 is now a range: n in [1, 16]"));
  auto mod = ingot::runtime::ProgramModule(a->program);
  testing::expect_near_tensors(mod(rand_tensor({16, 2}, 8)).at(0),
                               add(rand_tensor({16, 2}, 8), Scalar(1)));
  try {
    mod(rand_tensor({17, 2}, 9));
    FAIL();
  } catch (const ShapeError& e) {
    EXPECT_TRUE(contains(e.what(), "input 'x' dim 0 is 17, outside n in [1, 16]")) << e.what();
  }
}

TEST(ExporterSkips, SkipTableRefusesWithTheReason) {
  struct Unexportable : nn::Module {
    Unexportable() : Module("Unexportable") {}
  } m;
  auto fn = [](const Tensor& x) { return x; };
  try {
    RegTestExporter().export_fn(&m, fn, std::tuple{rand_tensor({2}, 1)}, NativeExportConfig());
    FAIL();
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(contains(e.what(), "Unexportable cannot be exported (export, regtest backend)"))
        << e.what();
    EXPECT_TRUE(contains(e.what(), "pass its tensors instead")) << e.what();
  }
  EXPECT_NO_THROW(
      NativeExporter().export_fn(&m, fn, std::tuple{rand_tensor({2}, 1)}, NativeExportConfig()));
  // The real entry: encoders have no decode step.
  auto bert = models::from_pretrained(testing::fixture_path("models/bert"));
  try {
    NativeExporter().export_for_generation(*bert, NativeExportConfig());
    FAIL();
  } catch (const NotSupportedError& e) {
    EXPECT_TRUE(contains(e.what(), "BertModel cannot be exported (generation")) << e.what();
    EXPECT_TRUE(contains(e.what(), "encoder-only")) << e.what();
  }
}

TEST(ToolVersions, DriftIsAWarningNamingBothVersions) {
  auto drift = tool_version_drift({{"onnx", pinned_tool_versions().at("onnx")},
                                   {"onnxruntime", "1.31.0"},
                                   {"unpinned-tool", "9"}});
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_TRUE(contains(drift[0], "onnxruntime 1.31.0 differs from the pinned " +
                                     pinned_tool_versions().at("onnxruntime")))
      << drift[0];
  std::vector<std::string> seen;
  WarningSink previous = set_warning_sink([&](const std::string& m) { seen.push_back(m); });
  EXPECT_EQ(warn_on_tool_version_drift({{"onnxruntime", "1.31.0"}}), 1u);
  EXPECT_EQ(warn_on_tool_version_drift(pinned_tool_versions()), 0u);
  set_warning_sink(previous);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(contains(seen[0], "[exporters] warning"));
}

TEST(ToolVersions, PinsEqualTheVenvRequirements) {
  std::ifstream f(testing::fixture_path("../../tools/onnx/requirements.txt"));
  ASSERT_TRUE(f.good());
  std::map<std::string, std::string> pins;
  for (std::string line; std::getline(f, line);) {
    line = line.substr(0, line.find('#'));
    size_t eq = line.find("==");
    if (eq == std::string::npos) continue;
    pins[line.substr(0, eq)] = line.substr(eq + 2, line.find_last_not_of(" \r\n") - eq - 1);
  }
  EXPECT_EQ(pins, pinned_tool_versions());
}

}  // namespace
}  // namespace ingot::exporters
