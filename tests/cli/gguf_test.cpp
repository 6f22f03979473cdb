// `ingot info | run | generate | export` on a GGUF file, end to end: the tiny llama GGUF of
// tools/reference/make_gguf_model_fixtures.py (its own byte-level tokenizer and chat
// template) gives transformers' logits and greedy ids, and exports for generation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/cpu/quantized_gemv.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;
using nlohmann::json;

// Each test gets its own cache (the materialised GGUF folder) and output folder.
class CliGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("ingot_cli_gguf_" + std::to_string(::getpid()));
    fs::create_directories(tmp_);
    setenv("XDG_CACHE_HOME", (tmp_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("XDG_CACHE_HOME");
    fs::remove_all(tmp_);
  }
  fs::path tmp_;
  // The fixture's Q4_0 / Q8_0 layers are kept packed; transformers' reference is f32
  // arithmetic on the dequantised weights, which the kernels give with f32 activations.
  cpu::ScopedQuantActivations exact_{cpu::QuantActivations::Float};
  const std::string dir_ = testing::fixture_path("gguf/models/llama");
  const std::string gguf_ = dir_ + "/llama.gguf";
};

TEST_F(CliGguf, InfoListsTheGgufTensorsAndTheConfig) {
  auto [rc, out] = captured(run_info, {gguf_});
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("Q8_0"), std::string::npos) << out;
  EXPECT_NE(out.find("LlamaForCausalLM"), std::string::npos) << out;
  EXPECT_NE(out.find("supported     yes"), std::string::npos) << out;
}

TEST_F(CliGguf, RunGivesTransformersLogits) {
  const fs::path out = tmp_ / "out";
  ASSERT_EQ(
      call(run_run, {gguf_, "--input", "input_ids=" + dir_ + "/input_ids.npy", "-o", out.string()}),
      0);
  testing::expect_close(formats::load_npy((out / "logits.npy").string()),
                        testing::values(formats::load_npy(dir_ + "/logits.npy")), 1e-4, 1e-4,
                        "logits");
}

TEST_F(CliGguf, GenerateAndExportedGenerateGiveTransformersGreedyIds) {
  std::ifstream f(dir_ + "/generate.json");
  const json want = json::parse(f);
  const std::string n = std::to_string(want["generated_ids"].size());
  auto [rc, out] = captured(run_generate, {gguf_, "--prompt", want["prompt"], "--greedy",
                                           "--max-new-tokens", n, "--json"});
  ASSERT_EQ(rc, 0);
  const json got = json::parse(out);
  EXPECT_EQ(got["prompt_ids"], want["prompt_ids"]);
  EXPECT_EQ(got["generated_ids"], want["generated_ids"]);

  const std::string exported = (tmp_ / "gen").string();
  ASSERT_EQ(
      call(run_export, {gguf_, "--task", "generation", "--max-cache-len", "64", "-o", exported}),
      0);
  auto [rc2, out2] = captured(run_generate, {exported, "--prompt", want["prompt"], "--greedy",
                                             "--max-new-tokens", n, "--json"});
  ASSERT_EQ(rc2, 0);
  EXPECT_EQ(json::parse(out2)["generated_ids"], want["generated_ids"]);
  // The chat template of the GGUF's metadata applies.
  auto [rc3, out3] = captured(
      run_generate, {gguf_, "--chat", "hi", "--greedy", "--max-new-tokens", "2", "--json"});
  ASSERT_EQ(rc3, 0);
  // Without the template "hi" is 2 ids and no BOS (add_bos_token is false); with it the
  // prompt opens with <|endoftext|> (id 95) and holds "user:", "hi" and "assistant:".
  const json ids = json::parse(out3)["prompt_ids"];
  EXPECT_EQ(ids[0], 95);
  EXPECT_GT(ids.size(), 15u);
}

}  // namespace
}  // namespace ingot::cli
