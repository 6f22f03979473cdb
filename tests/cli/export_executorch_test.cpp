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
#include "ingot/formats/npy.h"
#include "ingot/models/model.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/text/tokenizer.h"

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
  Tensor mask = formats::load_npy(dir + "/attention_mask.npy");
  cases.add({{"input_ids", formats::load_npy(dir + "/input_ids.npy")}, {"attention_mask", mask}},
            {{0, {"logits", formats::load_npy(dir + "/logits.npy")}}}, mask);
  EXPECT_TRUE(cases.run(pte, 1e-4).value("ok", false));
}

TEST(CliExportExecutorch, BackendXnnpackMatchesTransformersAndAppliesToExecutorchOnly) {
  const std::string dir = testing::fixture_path("models/llama");
  et::ScratchDir tmp("cli_et_backend");
  const std::string out = (tmp.path() / "m.pte").string();
  EXPECT_THROW(call(run_export, {dir, "--format", "onnx", "--backend", "portable", "-o", out}),
               ValueError);
  EXPECT_THROW(call(run_export, {dir, "--format", "executorch", "--backend", "vulkan", "-o", out}),
               ValueError);
  EXPECT_FALSE(fs::exists(out));  // a failed export leaves no file
  ASSERT_EQ(call(run_export,
                 {dir, "--format", "executorch", "--backend", "xnnpack", "--dynamic", "-o", out}),
            0);
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
  et::Cases cases(tmp.path() / "cases");
  Tensor mask = formats::load_npy(dir + "/attention_mask.npy");
  cases.add({{"input_ids", formats::load_npy(dir + "/input_ids.npy")}, {"attention_mask", mask}},
            {{0, {"logits", formats::load_npy(dir + "/logits.npy")}}}, mask);
  EXPECT_TRUE(cases.run(out, 1e-4).value("ok", false));
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
  EXPECT_TRUE(fs::exists(fs::path(out) / "llm_runner.pte"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "tokenizer.json") ||
              fs::exists(fs::path(out) / "config.json"));
}

// The directory's llm_runner.pte (cache as program state, forward(tokens, input_pos),
// the metadata methods) next to the exported tokenizer.json: ExecuTorch's TextLLMRunner
// (executorch.extension.llm.runner) generates ingot's greedy text on the demo LM (the
// eager model over a StaticCache, stopping at eos like the runner).
TEST(CliExportExecutorch, TextLlmRunnerGeneratesIngotsGreedyTextFromTheGenerationDirectory) {
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  et::ScratchDir tmp("cli_et_runner");
  const fs::path out = tmp.path() / "generation";
  ASSERT_EQ(call(run_export, {demo, "--format", "executorch", "--task", "generation",
                              "--max-cache-len", "64", "-o", out.string()}),
            0);
  ASSERT_TRUE(fs::exists(out / "llm_runner.pte"));
  ASSERT_TRUE(fs::exists(out / "tokenizer.json"));
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
  et::ToolResult probe = et::run_command("'" + et::venv_python().string() +
                                         "' -c 'import executorch.extension.llm.runner'");
  if (probe.status != 0)
    GTEST_SKIP() << "the executorch wheel has no executorch.extension.llm.runner: " << probe.log;

  const int64_t steps = 24;
  const std::string prompt = "It is a truth universally acknowledged, that";
  auto model = models::from_pretrained(demo);
  auto tok = text::Tokenizer::from_folder(demo);
  nn::StaticCache cache(*model->cache_spec(), 1, 64);
  std::vector<int64_t> ids = tok.encode(prompt, false), generated;
  Tensor step = Tensor::from_vector(ids, {1, int64_t(ids.size())});
  for (int64_t s = 0; s < steps; ++s) {
    models::ModelInputs in;
    in.input_ids = step;
    in.cache = &cache;
    Tensor logits = model->forward(in).logits;
    int64_t next = argmax(select(select(logits, 1, logits.size(1) - 1), 0, 0), 0).item<int64_t>();
    if (next == 0) break;  // assets/demo-lm/generation_config.json: eos 0
    generated.push_back(next);
    step = Tensor::from_vector(std::vector<int64_t>{next}, {1, 1});
  }
  const std::string want = tok.decode(generated);
  ASSERT_FALSE(want.empty());
  et::ToolResult r = et::run_tool(
      "llm_runner.py", {(out / "llm_runner.pte").string(), (out / "tokenizer.json").string(),
                        "--prompt", prompt, "--max-new-tokens", std::to_string(steps)});
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_TRUE(r.summary.is_object()) << r.log;
  EXPECT_EQ(r.summary["text"].get<std::string>(), want) << r.log;
  std::cout << "TextLLMRunner: \"" << r.summary["text"].get<std::string>() << "\" ("
            << generated.size() << " tokens)\n";
}

// Multimodal models (issue 18): `--task generation --format executorch` writes every
// component as a .pte (LLaVA: prefill + decode, the CLI default, and its image components)
// and the manifest's pipeline, without the text-only llm_runner.pte;
// the decode step names seed 003's inputs. With the venv, ExecuTorch runs T5's
// encoder.pte on the fixture's input_ids: == transformers' encoder states (1e-4).
TEST(CliExportExecutorch, GenerationTaskWritesTheComponentsOfMultimodalModels) {
  struct Case {
    const char* folder;
    std::vector<std::string> components;
    std::vector<std::string> decode_inputs;
  };
  const std::vector<Case> cases = {
      {"vlm/llava",
       {"decode", "image_encoder", "language_model", "lm_head", "multi_modal_projector", "prefill"},
       {"input_ids", "attention_mask", "position_ids", "cache"}},
      {"encdec/t5",
       {"cross_kv", "decode", "encoder"},
       {"input_ids", "cross_key_cache.N", "cross_value_cache.N", "cache"}},
  };
  et::ScratchDir tmp("cli_et_multimodal");
  for (const Case& c : cases) {
    SCOPED_TRACE(c.folder);
    const std::string out = (tmp.path() / fs::path(c.folder).filename()).string();
    ASSERT_EQ(call(run_export, {testing::fixture_path(c.folder), "--format", "executorch", "--task",
                                "generation", "--max-cache-len", "32", "-o", out}),
              0);
    nlohmann::json m = nlohmann::json::parse(std::ifstream(fs::path(out) / "manifest.json"));
    std::vector<std::string> names;
    for (const auto& [name, file] : m["components"].items()) {
      names.push_back(name);
      EXPECT_EQ(file.get<std::string>(), name + ".pte");
      EXPECT_TRUE(fs::exists(fs::path(out) / (name + ".pte"))) << name;
    }
    EXPECT_EQ(names, c.components);
    EXPECT_FALSE(fs::exists(fs::path(out) / "llm_runner.pte"));
    const nlohmann::json& steps = m["pipeline"]["steps"];
    ASSERT_TRUE(steps.is_array());
    EXPECT_EQ(steps.back()["component"], "decode");
    EXPECT_EQ(steps.back()["inputs"].get<std::vector<std::string>>(), c.decode_inputs);
  }
  if (!et::have_venv()) GTEST_SKIP() << et::skip_reason();
  const std::string t5 = testing::fixture_path("encdec/t5");
  et::Cases run(tmp.path() / "cases");
  run.add({{"input_ids", formats::load_npy(t5 + "/input_ids.npy")}},
          {{0, {"encoder_hidden_states", formats::load_npy(t5 + "/encoder_hidden_states.npy")}}});
  EXPECT_TRUE(run.run(tmp.path() / "t5" / "encoder.pte", 1e-4).value("ok", false));
}

}  // namespace
}  // namespace ingot::cli
