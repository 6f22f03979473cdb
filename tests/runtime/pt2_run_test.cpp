// .pt2 archives written by torch.export.save (tests/fixtures/pt2, made by
// tools/reference/make_pt2_fixtures.py) read into ingot programs and run by ingot's
// runtime: every user output equals torch's ep.module() within 1e-5 at every recorded
// shape, and every mutated buffer equals torch's after the call. Both dialects.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/export/pt2/reader.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(INGOT_FIXTURES_DIR) / "pt2";

std::vector<std::string> cases() {
  return {"buffer_mutation", "cond",        "nonzero_check",
          "static_int_dict", "loops_item",  "symint_input",
          "expr_sized",      "llama",       "gpt2",
          "qwen3",           "mixtral_moe", "qwen3_moe_small"};
}

// Largest |a - b| over all elements (as float); exact equality for integer / bool.
double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  if (a.sizes() != b.sizes()) return INFINITY;
  const Tensor fa = contiguous(to(a, DType::F64)), fb = contiguous(to(b, DType::F64));
  const double* pa = fa.data<double>();
  const double* pb = fb.data<double>();
  double m = 0;
  for (int64_t i = 0; i < fa.numel(); ++i) m = std::max(m, std::fabs(pa[i] - pb[i]));
  return m;
}

struct Param {
  std::string name;
  std::string archive;
};

class Pt2RunTest : public ::testing::TestWithParam<Param> {};

TEST_P(Pt2RunTest, OutputsEqualTorch) {
  const fs::path dir = kDir / GetParam().name;
  std::ifstream mf(dir / "manifest.json");
  ASSERT_TRUE(mf.good()) << dir;
  const nlohmann::json manifest = nlohmann::json::parse(mf);
  const ExportedProgram ep = pt2::load_pt2((dir / GetParam().archive).string());
  ASSERT_GE(manifest["cases"].size(), 2u);
  for (const auto& c : manifest["cases"]) {
    runtime::ProgramModule mod(ep);  // fresh buffers per case, as torch's fixture
    std::vector<Tensor> inputs;
    for (const auto& name : manifest["inputs"]) {
      if (c["inputs"].contains(name.get<std::string>()))
        inputs.push_back(formats::load_npy(
            (dir / c["inputs"][name.get<std::string>()].get<std::string>()).string()));
    }
    const std::vector<Tensor> out = mod.run(inputs);
    ASSERT_EQ(out.size(), c["outputs"].size());
    for (size_t j = 0; j < out.size(); ++j) {
      const Tensor want = formats::load_npy((dir / c["outputs"][j].get<std::string>()).string());
      EXPECT_EQ(out[j].dtype(), want.dtype()) << "output " << j;
      EXPECT_LE(max_diff(out[j], want), 1e-5)
          << GetParam().name << " output " << j << " at " << inputs[0].shape_string();
    }
    for (const auto& [buffer, file] : c["buffers"].items()) {
      const Tensor want = formats::load_npy((dir / file.get<std::string>()).string());
      EXPECT_LE(max_diff(mod.buffer(buffer), want), 1e-5)
          << GetParam().name << " buffer " << buffer;
    }
  }
}

// The buffer-mutation program updates its buffers as BUFFER_MUTATION outputs, in both
// dialects (the training one writes them in place with add_, the ATen one returns them).
TEST(Pt2Read, BufferUpdatesAreMutationOutputs) {
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    const ExportedProgram ep = pt2::load_pt2((kDir / "buffer_mutation" / archive).string());
    std::vector<std::string> mutated;
    for (const auto& o : ep.signature.outputs) {
      if (o.kind == OutputKind::BufferMutation) mutated.push_back(o.target);
    }
    std::sort(mutated.begin(), mutated.end());
    EXPECT_EQ(mutated, (std::vector<std::string>{"running", "steps"})) << archive;
  }
}

// Symbols keep torch's names and ranges; the output tree keeps transformers' ModelOutput
// with its `logits` key; use_cache=False stays a static input.
TEST(Pt2Read, SymbolsAndPytreesAreTorchs) {
  const ExportedProgram ep = pt2::load_pt2((kDir / "llama" / "model.pt2").string());
  ASSERT_EQ(ep.range_constraints.count("s70"), 1u) << ep.print();
  EXPECT_EQ(ep.range_constraints.at("s70").range.str(), "[2, 64]");
  EXPECT_EQ(ep.out_spec.type, "transformers.modeling_outputs.CausalLMOutputWithPast");
  EXPECT_EQ(ep.out_spec.keys, (std::vector<std::string>{"logits"}));
  EXPECT_EQ(ep.input_names, (std::vector<std::string>{"input_ids", "use_cache"}));
  ASSERT_EQ(ep.in_spec.children.size(), 2u);
  EXPECT_EQ(ep.in_spec.children[1].str(), "static(False)");
  // Weights are views of the mapped archive, not copies.
  for (const auto& [name, t] : ep.state) EXPECT_TRUE(t.storage()->is_mapped()) << name;
}

// A shape outside the range torch recorded is an error naming the input.
TEST(Pt2Read, ShapeOutsideRangeIsAnError) {
  const ExportedProgram ep = pt2::load_pt2((kDir / "llama" / "model.pt2").string());
  runtime::ProgramModule mod(ep);
  Tensor ids = Tensor::from_vector<int64_t>(std::vector<int64_t>(70, 3), {1, 70});
  try {
    mod.run({ids});
    FAIL() << "a sequence of 70 ran, the range is [2, 64]";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'input_ids' dim 1 is 70"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 64]"), std::string::npos) << e.what();
  }
}

// The error a run gives (empty when it runs).
std::string run_error(const ExportedProgram& ep, const std::vector<Tensor>& inputs) {
  runtime::ProgramModule mod(ep);
  try {
    mod.run(inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Inputs torch sized by expressions (y [2*s, 3], z [s + 1]) keep those sizes; sizes that
// break the relation are errors naming the input, the dim and the expression.
TEST(Pt2Read, ExpressionSizedInputsAreCheckedAtRunTime) {
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    const ExportedProgram ep = pt2::load_pt2((kDir / "expr_sized" / archive).string());
    const ir::Graph& g = *ep.graph;
    const size_t n = g.inputs.size();
    ASSERT_GE(n, 3u);
    const sym::Expr s = g.value(g.inputs[n - 3]).sizes[0];
    ASSERT_TRUE(s.is_symbol()) << s.str();
    EXPECT_EQ(g.value(g.inputs[n - 2]).sizes[0], sym::mul(sym::integer(2), s));
    EXPECT_EQ(g.value(g.inputs[n - 1]).sizes[0], sym::add(s, sym::integer(1)));
    const Tensor x = Tensor::empty({4, 3}, DType::F32, true);
    EXPECT_EQ(run_error(ep, {x, Tensor::empty({8, 3}, DType::F32, true),
                             Tensor::empty({5}, DType::F32, true)}),
              "");
    const std::string ey = run_error(
        ep, {x, Tensor::empty({9, 3}, DType::F32, true), Tensor::empty({5}, DType::F32, true)});
    EXPECT_NE(ey.find("input 'y' dim 0 is 9"), std::string::npos) << ey;
    EXPECT_NE(ey.find("2*" + s.str() + " = 8"), std::string::npos) << ey;
    const std::string ez = run_error(
        ep, {x, Tensor::empty({8, 3}, DType::F32, true), Tensor::empty({4}, DType::F32, true)});
    EXPECT_NE(ez.find("input 'z' dim 0 is 4"), std::string::npos) << ez;
  }
}

// A SymInt input is a 0-d int64 tensor; a value outside torch's range (n >= 0) is an
// error naming it.
TEST(Pt2Read, SymIntInputOutsideItsRangeIsAnError) {
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    const ExportedProgram ep = pt2::load_pt2((kDir / "symint_input" / archive).string());
    const Tensor x = Tensor::empty({4, 3}, DType::F32, true);
    EXPECT_EQ(run_error(ep, {x, Tensor::from_vector<int64_t>({3}, {})}), "");
    const std::string e = run_error(ep, {x, Tensor::from_vector<int64_t>({-2}, {})});
    EXPECT_NE(e.find("SymInt input 'n' must be >= 0"), std::string::npos) << e;
  }
}

std::vector<Param> params() {
  std::vector<Param> p;
  for (const auto& n : cases()) {
    p.push_back({n, "model.pt2"});
    p.push_back({n, "model_aten.pt2"});
  }
  return p;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2RunTest, ::testing::ValuesIn(params()), [](const auto& info) {
  return info.param.name + (info.param.archive == "model.pt2" ? "_training" : "_aten");
});

}  // namespace
}  // namespace ingot

namespace ingot {
namespace {

// torch's stack_trace metadata becomes the nodes' source lines: the printed program (and
// runtime errors) name the user's Python file and line, not torch's generated code.
TEST(Pt2Read, NodesCarryTheUsersPythonLines) {
  const ExportedProgram ep = pt2::load_pt2((kDir / "llama" / "model.pt2").string());
  size_t from_modeling = 0;
  for (const ir::Node& n : ep.graph->nodes()) {
    if (!n.source.known()) continue;
    EXPECT_EQ(n.source.file.find("<eval_with_key>"), std::string::npos) << n.source.str();
    EXPECT_EQ(n.source.file.find("/torch/"), std::string::npos) << n.source.str();
    if (n.source.file.ends_with("modeling_llama.py")) ++from_modeling;
  }
  EXPECT_GT(from_modeling, ep.graph->nodes().size() / 2) << ep.print();
  EXPECT_NE(ep.print().find("modeling_llama.py:"), std::string::npos) << ep.print();
  // Subgraph nodes too (cond's branches, written in the fixture script's forward).
  const ExportedProgram c = pt2::load_pt2((kDir / "cond" / "model.pt2").string());
  bool branch_line = false;
  for (const ir::Node& n : c.graph->nodes())
    for (const auto& sg : n.subgraphs)
      for (const ir::Node& b : sg->nodes())
        branch_line = branch_line || b.source.file.ends_with("make_pt2_fixtures.py");
  EXPECT_TRUE(branch_line) << c.print();
}

}  // namespace
}  // namespace ingot
