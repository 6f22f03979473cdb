// torch.export archives (tests/fixtures/pt2) re-exported to OpenVINO through ingot (issue
// 19): the program read from the .pt2 (both dialects, model.pt2 and model_aten.pt2),
// lowered by the OpenVINO exporter, saved as IR and run by OpenVINO's CPU plugin (f32
// inference, tools/openvino/run_cases.py) on every recorded case equals torch's outputs
// within 1e-4. Mutated buffers are checked both ways the exporter writes them:
//  * stateful = false: each is an input.<buffer> / output.<buffer> pair; input.<buffer> is
//    fed the buffer's initial value and output.<buffer> must equal torch's buffer after
//    the call (the manifest's "buffers");
//  * stateful = true (the default): each is a ReadValue / Assign variable starting at the
//    buffer's value; the variable after the call (query_state) must equal torch's buffer.
// SKIPs with the reason when the venv of tools/openvino/setup-venv is absent.
#include <gtest/gtest.h>

#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/openvino_config.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/ops/functional.h"
#include "ov_harness.h"
#include "pt2_fixture_cases.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace ovt = testing::ov;
namespace fixtures = testing::pt2_fixtures;
constexpr double kAtol = 1e-4;  // f32 OpenVINO vs torch

bool has_mutations(const ExportedProgram& p) {
  for (const OutputSpec& o : p.signature.outputs)
    if (o.kind != OutputKind::UserOutput) return true;
  return false;
}

// The value OpenVINO's query_state() gives for a variable holding `t`:
// cpu_i64_variables_as_i32 (cpu_ir_fixes.cpp) holds an i64 variable as i32, and the CPU
// plugin reads a 0-d variable back as [1] (openvino 2026.4).
Tensor as_queried_state(Tensor t) {
  if (t.dtype() == DType::I64) t = to(t, DType::I32);
  if (t.dim() == 0) t = reshape(t, {SymInt(1)});
  return contiguous(t);
}

// Lowers `archive` of fixture `name` with `stateful` and runs every case of `m` in
// OpenVINO against torch's recorded outputs (and mutated buffers).
void judge_archive(const std::string& name, const char* archive, const nlohmann::json& m,
                   bool stateful) {
  SCOPED_TRACE(std::string(archive) + (stateful ? " stateful" : " stateful = false"));
  ExportedProgram ep = pt2::load_pt2((fixtures::kDir / name / archive).string());
  OpenVINOConfig config;
  config.stateful = stateful;
  auto exporter = AutoExporter::from_config(config);
  auto artifact = exporter->lower(std::move(ep), config);
  auto* ov = dynamic_cast<OpenVINOModel*>(artifact.get());
  ASSERT_NE(ov, nullptr);
  const ExportedProgram& p = artifact->program;
  ovt::ScratchDir dir(name + "_" + fs::path(archive).stem().string() +
                      (stateful ? "_stateful" : "_pairs"));
  const fs::path model = dir.path() / "model.xml";
  artifact->save(model.string());
  // Results in signature order (user outputs are torch's flattened outputs; a mutated
  // buffer is output.<buffer> or, stateful, the variable <buffer>).
  const std::vector<std::string> out_names = openvino::openvino_output_names(p);
  // Parameters: the user inputs in order, and input.<buffer> for mutated buffers.
  std::vector<std::string> user_inputs;
  for (const std::string& n : ov->input_names)
    if (n.rfind("input.", 0) != 0) user_inputs.push_back(n);
  ovt::Cases cases(dir.path() / "cases");
  for (const auto& c : m["cases"]) {
    std::map<std::string, Tensor> in, want;
    const std::vector<Tensor> inputs = fixtures::case_inputs(name, m, c);
    ASSERT_EQ(inputs.size(), user_inputs.size());
    for (size_t k = 0; k < inputs.size(); ++k) in[user_inputs[k]] = inputs[k];
    size_t j_user = 0;
    for (size_t j = 0; j < p.signature.outputs.size(); ++j) {
      const OutputSpec& o = p.signature.outputs[j];
      if (o.kind == OutputKind::UserOutput) {
        ASSERT_LT(j_user, c["outputs"].size());
        want[out_names[j]] = fixtures::load(name, c["outputs"][j_user++]);
        continue;
      }
      ASSERT_TRUE(c.contains("buffers") && c["buffers"].contains(o.target))
          << name << ": the manifest records no value of the mutated buffer " << o.target;
      const Tensor after = fixtures::load(name, c["buffers"][o.target]);
      if (stateful) {
        want["state." + o.target] = as_queried_state(after);
      } else {
        in["input." + o.target] = contiguous(p.state.at(o.target));
        want[out_names[j]] = after;
      }
    }
    ASSERT_EQ(j_user, c["outputs"].size());
    cases.add(in, want);
  }
  const nlohmann::json summary = cases.run(model, kAtol);
  EXPECT_TRUE(summary.value("ok", false)) << name << "/" << archive << ": " << summary.dump();
  std::printf("pt2 -> openvino %s/%s%s: worst %s\n", name.c_str(), archive,
              stateful ? " (stateful)" : "",
              summary.value("worst", nlohmann::json()).dump().c_str());
}

class Pt2OpenVINO : public ::testing::TestWithParam<std::string> {};

TEST_P(Pt2OpenVINO, OpenVINOEqualsTorch) {
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  const std::string name = GetParam();
  const nlohmann::json m = fixtures::manifest(name);
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    judge_archive(name, archive, m, false);
    if (has_mutations(pt2::load_pt2((fixtures::kDir / name / archive).string())))
      judge_archive(name, archive, m, true);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2OpenVINO, ::testing::ValuesIn(fixtures::kNames),
                         fixtures::test_name);

}  // namespace
}  // namespace ingot::exporters
