// torch.export archives (tests/fixtures/pt2) re-exported to ONNX through ingot: the
// program read from the .pt2, lowered by the ONNX exporter, run by ONNX Runtime (the
// venv of tools/onnx/setup-venv) on every recorded case equals torch's outputs within
// 1e-4. SKIPs with the reason when the venv is absent.
#include <gtest/gtest.h>

#include "ingot/exporters/onnx/onnx_config.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/formats/pt2/reader.h"
#include "ort_harness.h"
#include "pt2_fixture_cases.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
namespace fixtures = testing::pt2_fixtures;

class Pt2Onnx : public ::testing::TestWithParam<std::string> {};

TEST_P(Pt2Onnx, OnnxRuntimeEqualsTorch) {
  if (!testing::ort::have_venv()) GTEST_SKIP() << testing::ort::skip_reason();
  const std::string name = GetParam();
  const nlohmann::json m = fixtures::manifest(name);
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    ExportedProgram ep = pt2::load_pt2((fixtures::kDir / name / archive).string());
    OnnxConfig config;
    auto exporter = AutoExporter::from_config(config);
    auto artifact = exporter->lower(std::move(ep), config);
    auto* onnx = dynamic_cast<OnnxProgram*>(artifact.get());
    ASSERT_NE(onnx, nullptr);
    testing::ort::ScratchDir dir(name + "_" + fs::path(archive).stem().string());
    const fs::path model = dir.path() / "model.onnx";
    artifact->save(model.string());
    // ONNX outputs in signature order; the user outputs are torch's flattened outputs.
    std::vector<std::string> user_outputs;
    for (size_t i = 0; i < artifact->program.signature.outputs.size(); ++i) {
      if (artifact->program.signature.outputs[i].kind == OutputKind::UserOutput)
        user_outputs.push_back(onnx->output_names.at(i));
    }
    // ONNX inputs: the user inputs, and "input.<buffer>" for mutable buffers (which
    // default to their initial values).
    std::vector<std::string> user_inputs;
    for (const std::string& n : onnx->input_names)
      if (n.rfind("input.", 0) != 0) user_inputs.push_back(n);
    testing::ort::Cases cases(dir.path() / "cases");
    for (const auto& c : m["cases"]) {
      std::map<std::string, Tensor> in, want;
      const std::vector<Tensor> inputs = fixtures::case_inputs(name, m, c);
      ASSERT_EQ(inputs.size(), user_inputs.size());
      for (size_t k = 0; k < inputs.size(); ++k) in[user_inputs[k]] = inputs[k];
      ASSERT_EQ(c["outputs"].size(), user_outputs.size());
      for (size_t j = 0; j < user_outputs.size(); ++j)
        want[user_outputs[j]] = fixtures::load(name, c["outputs"][j]);
      cases.add(in, want);
    }
    const nlohmann::json summary = cases.run(model, 1e-4);
    EXPECT_TRUE(summary.value("ok", false)) << name << "/" << archive << ": " << summary.dump();
    std::printf("pt2 -> onnx %s/%s: worst %s\n", name.c_str(), archive,
                summary.value("worst", nlohmann::json()).dump().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Pt2Onnx, ::testing::ValuesIn(fixtures::kNames),
                         fixtures::test_name);

}  // namespace
}  // namespace ingot::exporters
