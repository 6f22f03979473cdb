// The ATen op fixtures (tests/fixtures/pt2_ops) whose every op has a lowering — the
// families of remainder / fmod, unary float math and rounding, the composite shape ops
// and pooling — re-exported through ingot to ONNX (run by ONNX Runtime, tools/onnx/setup-venv)
// and OpenVINO IR (its CPU plugin, tools/openvino/setup-venv), both dialects, every
// recorded case: equal to torch's outputs within 1e-4. The other families use ops with
// no lowering yet (docs/pt2.md). SKIPs with the reason when a venv is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/exporters/onnx/onnx_config.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/openvino_config.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/pt2/reader.h"
#include "ort_harness.h"
#include "ov_harness.h"

namespace ingot::exporters {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(INGOT_FIXTURES_DIR) / "pt2_ops";
constexpr double kAtol = 1e-4;

nlohmann::json manifest(const std::string& family) {
  std::ifstream in(kDir / family / "manifest.json");
  return nlohmann::json::parse(in);
}

Tensor load(const std::string& family, const nlohmann::json& file) {
  return formats::load_npy((kDir / family / file.get<std::string>()).string());
}

std::vector<Tensor> case_inputs(const std::string& family, const nlohmann::json& m,
                                const nlohmann::json& c) {
  std::vector<Tensor> in;
  for (const auto& n : m["inputs"]) in.push_back(load(family, c["inputs"][n.get<std::string>()]));
  return in;
}

class Pt2OpsLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(Pt2OpsLowering, OnnxRuntimeEqualsTorch) {
  if (!testing::ort::have_venv()) GTEST_SKIP() << testing::ort::skip_reason();
  const std::string family = GetParam();
  const nlohmann::json m = manifest(family);
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    OnnxConfig config;
    auto artifact = AutoExporter::from_config(config)->lower(
        pt2::load_pt2((kDir / family / archive).string()), config);
    auto* onnx = dynamic_cast<OnnxProgram*>(artifact.get());
    ASSERT_NE(onnx, nullptr);
    testing::ort::ScratchDir dir("ops_" + family + "_" + fs::path(archive).stem().string());
    const fs::path model = dir.path() / "model.onnx";
    artifact->save(model.string());
    testing::ort::Cases cases(dir.path() / "cases");
    for (const auto& c : m["cases"]) {
      std::map<std::string, Tensor> in, want;
      const std::vector<Tensor> inputs = case_inputs(family, m, c);
      ASSERT_EQ(inputs.size(), onnx->input_names.size());
      for (size_t k = 0; k < inputs.size(); ++k) in[onnx->input_names[k]] = inputs[k];
      ASSERT_EQ(c["outputs"].size(), onnx->output_names.size());
      for (size_t j = 0; j < onnx->output_names.size(); ++j)
        want[onnx->output_names[j]] = load(family, c["outputs"][j]);
      cases.add(in, want);
    }
    const nlohmann::json summary = cases.run(model, kAtol);
    EXPECT_TRUE(summary.value("ok", false)) << family << "/" << archive << ": " << summary.dump();
  }
}

TEST_P(Pt2OpsLowering, OpenVINOEqualsTorch) {
  if (!testing::ov::have_venv()) GTEST_SKIP() << testing::ov::skip_reason();
  const std::string family = GetParam();
  const nlohmann::json m = manifest(family);
  for (const char* archive : {"model.pt2", "model_aten.pt2"}) {
    OpenVINOConfig config;
    auto artifact = AutoExporter::from_config(config)->lower(
        pt2::load_pt2((kDir / family / archive).string()), config);
    auto* ov = dynamic_cast<OpenVINOModel*>(artifact.get());
    ASSERT_NE(ov, nullptr);
    testing::ov::ScratchDir dir("ops_" + family + "_" + fs::path(archive).stem().string());
    const fs::path model = dir.path() / "model.xml";
    artifact->save(model.string());
    const std::vector<std::string> out_names = openvino::openvino_output_names(artifact->program);
    testing::ov::Cases cases(dir.path() / "cases");
    for (const auto& c : m["cases"]) {
      std::map<std::string, Tensor> in, want;
      const std::vector<Tensor> inputs = case_inputs(family, m, c);
      ASSERT_EQ(inputs.size(), ov->input_names.size());
      for (size_t k = 0; k < inputs.size(); ++k) in[ov->input_names[k]] = inputs[k];
      ASSERT_EQ(c["outputs"].size(), out_names.size());
      for (size_t j = 0; j < out_names.size(); ++j)
        want[out_names[j]] = load(family, c["outputs"][j]);
      cases.add(in, want);
    }
    const nlohmann::json summary = cases.run(model, kAtol);
    EXPECT_TRUE(summary.value("ok", false)) << family << "/" << archive << ": " << summary.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Pt2OpsLowering,
                         ::testing::Values("remainder", "unary_float", "binary_float", "shapes",
                                           "pooling"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::exporters
