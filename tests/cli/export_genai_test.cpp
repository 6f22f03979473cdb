// `ingot export --format onnx --task generation --genai`: ONNX Runtime GenAI's directory
// (genai_config.json, decode.onnx in the growing past/present cache layout, tokenizer
// files), judged by onnxruntime_genai itself (tools/genai/genai_generate.py in the venv of
// tools/genai/setup-venv): its greedy ids on the directory == transformers' on the folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../exporters/ort_harness.h"
#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/exporters/onnx/reader.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

using cli_testing::call;

const testing::VenvTool& genai_tool() {
  static const testing::VenvTool t{"ONNX Runtime GenAI", "INGOT_GENAI_VENV", "genai-venv",
                                   "tools/genai", "tools/genai/setup-venv"};
  return t;
}

bool has_name(const std::vector<exporters::onnx::ValueInfoProto>& values, const std::string& n) {
  for (const auto& v : values)
    if (v.name == n) return true;
  return false;
}

// A Qwen2 fixture with a tokenizer and generation_config.json (eos [383, 381]), GQA
// (4 heads over 2 KV heads): what GenAI needs to load and stop.
TEST(CliExportGenai, WritesGenaiDirectoryThatOnnxRuntimeGenaiRunsGreedyLikeTransformers) {
  const std::string dir = testing::fixture_path("models/instruct_chatml");
  testing::ort::ScratchDir tmp("cli_genai");
  const std::string out = (tmp.path() / "genai").string();
  ASSERT_EQ(call(run_export, {dir, "--format", "onnx", "--task", "generation", "--genai",
                              "--max-cache-len", "64", "-o", out}),
            0);
  for (const char* f : {"genai_config.json", "decode.onnx", "tokenizer.json",
                        "tokenizer_config.json", "manifest.json"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  // The decoder's inputs and outputs as GenAI names them; nothing in place.
  auto m = exporters::onnx::load_model(out + "/decode.onnx");
  for (const char* n : {"input_ids", "attention_mask", "position_ids", "past_key_values.0.key",
                        "past_key_values.1.value"})
    EXPECT_TRUE(has_name(m.graph.input, n)) << n;
  for (const char* n : {"logits", "present.0.key", "present.1.value"})
    EXPECT_TRUE(has_name(m.graph.output, n)) << n;
  EXPECT_FALSE(has_name(m.graph.input, "input.cache_position"));
  // genai_config.json: the type, geometry, stop ids and the non-shared growing cache.
  nlohmann::json c = nlohmann::json::parse(std::ifstream(out + "/genai_config.json"));
  EXPECT_EQ(c["model"]["type"], "qwen2");
  EXPECT_EQ(c["model"]["decoder"]["filename"], "decode.onnx");
  EXPECT_EQ(c["model"]["decoder"]["num_key_value_heads"], 2);
  EXPECT_EQ(c["model"]["decoder"]["num_attention_heads"], 4);
  EXPECT_EQ(c["model"]["decoder"]["head_size"], 16);
  EXPECT_EQ(c["model"]["decoder"]["num_hidden_layers"], 2);
  EXPECT_EQ(c["model"]["decoder"]["inputs"]["past_key_names"], "past_key_values.%d.key");
  EXPECT_EQ(c["model"]["decoder"]["outputs"]["present_value_names"], "present.%d.value");
  EXPECT_EQ(c["model"]["eos_token_id"], nlohmann::json::array({383, 381}));
  EXPECT_EQ(c["model"]["context_length"], 64);
  EXPECT_EQ(c["search"]["past_present_share_buffer"], false);
  if (!genai_tool().exists()) GTEST_SKIP() << genai_tool().skip_reason();
  // The fixture's chat case (a 36-token prompt; the committed answer ends with <|im_end|>,
  // where GenAI stops), and a short prompt run for 24 steps without an eos.
  nlohmann::json ref = nlohmann::json::parse(std::ifstream(dir + "/reference.json"));
  const nlohmann::json& chat = ref["cases"][0];
  std::string ids;
  for (const auto& id : chat["prompt_ids"]) ids += (ids.empty() ? "" : ",") + id.dump();
  testing::ToolResult r = genai_tool().run(
      "genai_generate.py", {"--dir", out, "--hf", dir, "--steps", "24", "--ids", ids});
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_EQ(r.summary["genai"], chat["generated_ids"]) << r.log;
  r = genai_tool().run("genai_generate.py",
                       {"--dir", out, "--hf", dir, "--steps", "24", "--prompt", "hello"});
  EXPECT_EQ(r.status, 0) << r.log;
  EXPECT_EQ(r.summary["genai"].size(), 24u) << r.log;
}

TEST(CliExportGenai, ErrorsNameTheOptionAtFault) {
  const std::string dir = testing::fixture_path("models/instruct_chatml");
  testing::ort::ScratchDir tmp("cli_genai_errors");
  const std::string out = (tmp.path() / "genai").string();
  // --genai is ONNX's, and a generation directory.
  EXPECT_THROW(call(run_export, {dir, "--task", "generation", "--genai", "-o", out}), ValueError);
  EXPECT_THROW(call(run_export, {dir, "--format", "onnx", "--genai", "-o", out + ".onnx"}),
               ValueError);
  // A model_type GenAI has no decoder type for (gpt_neox) is refused, naming it.
  try {
    call(run_export, {testing::fixture_path("models/gpt_neox"), "--format", "onnx", "--task",
                      "generation", "--genai", "-o", out});
    ADD_FAILURE() << "gpt_neox exported for GenAI";
  } catch (const NotSupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("'gpt_neox'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::cli
