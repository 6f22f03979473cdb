// `ingot export --format onnx` and `ingot export --config config.json` end to end on a
// fixture: the files, their names and in-place pairs, and (with the ONNX venv) ONNX
// Runtime's logits against the transformers reference committed with the fixture.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../exporters/ort_harness.h"
#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/exporters/onnx/reader.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;

std::vector<std::string> input_names(const exporters::onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& i : m.graph.input) out.push_back(i.name);
  return out;
}

TEST(CliExportOnnx, FormatOnnxDynamicMatchesTransformersInOnnxRuntime) {
  const std::string dir = testing::fixture_path("models/qwen3");
  testing::ort::ScratchDir tmp("cli_onnx");
  const std::string model = (tmp.path() / "qwen3.onnx").string();
  ASSERT_EQ(call(run_export, {dir, "--format", "onnx", "--dynamic", "--optimize", "-o", model}), 0);
  auto m = exporters::onnx::load_model(model);
  EXPECT_EQ(input_names(m), (std::vector<std::string>{"input_ids", "attention_mask"}));
  EXPECT_EQ(m.graph.output.at(0).name, "logits");
  if (!testing::ort::have_venv()) GTEST_SKIP() << testing::ort::skip_reason();
  auto r = testing::ort::run_tool(
      "check_and_run.py", {model, "--input", "input_ids=" + dir + "/input_ids.npy", "--input",
                           "attention_mask=" + dir + "/attention_mask.npy", "--expect",
                           "logits=" + dir + "/logits.npy", "--atol", "1e-4"});
  EXPECT_EQ(r.status, 0) << r.log;
}

TEST(CliExportOnnx, ConfigJsonPicksTheExporterAndItsOptions) {
  const std::string dir = testing::fixture_path("models/gpt2");
  testing::ort::ScratchDir tmp("cli_config");
  const std::string out = (tmp.path() / "gpt2.onnx").string();
  const std::string config = (tmp.path() / "config.json").string();
  std::ofstream(config)
      << R"({"export_format": "onnx", "dynamic": true, "opset": 19, "external_data": "always",
                               "output_path": ")" +
             out + R"("})";
  ASSERT_EQ(call(run_export, {dir, "--config", config}), 0);
  EXPECT_TRUE(fs::exists(out + ".data"));
  auto m = exporters::onnx::load_model(out);
  EXPECT_EQ(m.opset_version(), 19);
  // The same config file with the native format writes an archive.
  std::ofstream(config) << R"({"export_format": "native", "dynamic": true})";
  const std::string archive = (tmp.path() / "gpt2.ingot").string();
  ASSERT_EQ(call(run_export, {dir, "--config", config, "-o", archive}), 0);
  EXPECT_TRUE(fs::exists(archive));
  // Errors name what is wrong.
  std::ofstream(config) << R"({"export_format": "tflite"})";  // not a format
  EXPECT_THROW(call(run_export, {dir, "--config", config, "-o", out}), ValueError);
  std::ofstream(config) << R"({"export_format": "native"})";
  EXPECT_THROW(call(run_export, {dir, "--config", config, "--format", "onnx", "-o", out}),
               ValueError);
  EXPECT_THROW(call(run_export, {dir, "--opset", "18", "-o", archive}),
               ValueError);  // native has no opset
  EXPECT_THROW(call(run_export, {dir, "--format", "onnx", "--opset", "x", "-o", out}), ValueError);
}

TEST(CliExportOnnx, GenerationTaskWritesTheDecodeGraphWithCachePairs) {
  const std::string dir = testing::fixture_path("models/llama");
  testing::ort::ScratchDir tmp("cli_decode");
  const std::string out = (tmp.path() / "generation").string();
  ASSERT_EQ(call(run_export, {dir, "--format", "onnx", "--dynamic", "--task", "generation",
                              "--multi-token-decode", "--max-cache-len", "32", "-o", out}),
            0);
  // A generation directory, like the native one: the components, a manifest that names
  // their format, the tokenizer files.
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / "manifest.json"));
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(out) / "prefill.onnx"));
  auto m = exporters::onnx::load_model(out + "/decode.onnx");
  auto names = input_names(m);
  EXPECT_EQ(names.at(0), "input_ids");
  EXPECT_EQ(names.at(1), "input.key_cache.0");
  EXPECT_EQ(names.back(), "input.cache_position");
  bool paired = false;
  for (const auto& o : m.graph.output) paired = paired || o.name == "output.key_cache.0";
  EXPECT_TRUE(paired);
  EXPECT_THROW(call(run_export, {testing::fixture_path("models/bert"), "--format", "onnx", "--task",
                                 "generation", "-o", out}),
               NotSupportedError);
}

}  // namespace
}  // namespace ingot::cli
