// `ingot export --format executorch` end to end on a fixture: the .pte and (with the
// reference venv, which pins executorch) ExecuTorch's runtime on transformers' committed
// inputs, its logits against the committed transformers logits; --backend and
// --task generation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../exporters/et_harness.h"
#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/models/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
namespace et = testing::et;
using cli_testing::call;

TEST(CliExportExecutorch, FormatExecutorchDynamicMatchesTransformersInExecuTorch) {
  const std::string dir = testing::fixture_path("models/qwen3");
  et::ScratchDir tmp("cli_et");
  const std::string pte = (tmp.path() / "qwen3.pte").string();
  ASSERT_EQ(call(run_export,
                 {dir, "--format", "executorch", "--backend", "portable", "--dynamic", "-o", pte}),
            0);
  std::ifstream f(pte, std::ios::binary);
  std::string head(8, '\0');
  f.read(head.data(), 8);
  EXPECT_EQ(head.substr(4), "ET12");
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
  et::Cases cases(tmp.path() / "cases");
  Tensor mask = models::load_npy(dir + "/attention_mask.npy");
  cases.add({{"input_ids", models::load_npy(dir + "/input_ids.npy")}, {"attention_mask", mask}},
            {{0, {"logits", models::load_npy(dir + "/logits.npy")}}}, mask);
  EXPECT_TRUE(cases.run(pte, 1e-4).value("ok", false));
}

TEST(CliExportExecutorch, BackendAppliesToExecutorchOnlyAndXnnpackIsNotSilentlyPortable) {
  const std::string dir = testing::fixture_path("models/llama");
  et::ScratchDir tmp("cli_et_backend");
  const std::string out = (tmp.path() / "m.pte").string();
  EXPECT_THROW(call(run_export, {dir, "--format", "onnx", "--backend", "portable", "-o", out}),
               ValueError);
  EXPECT_THROW(call(run_export, {dir, "--format", "executorch", "--backend", "xnnpack", "-o", out}),
               NotSupportedError);
  EXPECT_FALSE(fs::exists(out));  // a failed export leaves no file
}

TEST(CliExportExecutorch, GenerationTaskWritesADecodePteDirectory) {
  const std::string dir = testing::fixture_path("models/llama");
  et::ScratchDir tmp("cli_et_decode");
  const std::string out = (tmp.path() / "generation").string();
  ASSERT_EQ(call(run_export, {dir, "--format", "executorch", "--task", "generation",
                              "--multi-token-decode", "--max-cache-len", "32", "-o", out}),
            0);
  EXPECT_TRUE(fs::exists(fs::path(out) / "manifest.json"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "decode.pte"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "tokenizer.json") ||
              fs::exists(fs::path(out) / "config.json"));
}

}  // namespace
}  // namespace ingot::cli
