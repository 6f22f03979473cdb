// `ingot export --format openvino` end to end: the IR files of a forward export (with
// the OpenVINO venv: OpenVINO's logits against the transformers reference committed with
// the fixture, 1e-4 on non-padded positions), --compress-to-fp16, and a generation
// directory that OpenVINO GenAI's LLMPipeline loads and decodes to the same greedy text
// as `ingot generate` on the demo model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../exporters/ov_harness.h"
#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
namespace ovt = testing::ov;
using cli_testing::call;
using cli_testing::captured;

TEST(CliExportOpenVINO, FormatOpenVINODynamicMatchesTransformersInOpenVINO) {
  const std::string dir = testing::fixture_path("models/qwen3");
  ovt::ScratchDir tmp("cli_ov");
  const std::string model = (tmp.path() / "qwen3.xml").string();
  ASSERT_EQ(call(run_export, {dir, "--format", "openvino", "--dynamic", "-o", model}), 0);
  EXPECT_TRUE(fs::exists(tmp.path() / "qwen3.bin"));
  // --compress-to-fp16 halves the weights; it is an OpenVINO option only.
  const std::string half = (tmp.path() / "half.xml").string();
  ASSERT_EQ(call(run_export,
                 {dir, "--format", "openvino", "--dynamic", "--compress-to-fp16", "-o", half}),
            0);
  EXPECT_LT(fs::file_size(tmp.path() / "half.bin"),
            fs::file_size(tmp.path() / "qwen3.bin") * 6 / 10);
  EXPECT_THROW(call(run_export, {dir, "--format", "onnx", "--compress-to-fp16", "-o",
                                 (tmp.path() / "x.onnx").string()}),
               ValueError);
  // -o without .xml is a directory in optimum-intel's layout, not an XML file without an
  // extension.
  const fs::path as_dir = tmp.path() / "qwen3-ov";
  ASSERT_EQ(call(run_export, {dir, "--format", "openvino", "-o", as_dir.string()}), 0);
  EXPECT_TRUE(fs::is_directory(as_dir));
  EXPECT_TRUE(fs::exists(as_dir / "openvino_model.xml"));
  EXPECT_TRUE(fs::exists(as_dir / "openvino_model.bin"));
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  ovt::Cases cases(tmp.path() / "cases");
  Tensor mask = formats::load_npy(dir + "/attention_mask.npy");
  cases.add({{"input_ids", formats::load_npy(dir + "/input_ids.npy")}, {"attention_mask", mask}},
            {{"logits", formats::load_npy(dir + "/logits.npy")}},
            {{"logits", ne(mask, Scalar(0))}});
  EXPECT_TRUE(cases.run(model, 1e-4).value("ok", false));
  EXPECT_TRUE(cases.run(half, 2e-2).value("ok", false));  // float16 weights: a looser bound
}

TEST(CliExportOpenVINO, GenerationDirectoryGivesIngotsGreedyTextInOpenVINOGenAI) {
  const std::string demo = testing::fixture_path("../../assets/demo-lm");
  ovt::ScratchDir tmp("cli_ov_genai");
  const std::string out = (tmp.path() / "demo-ov").string();
  ASSERT_EQ(call(run_export, {demo, "--format", "openvino", "--task", "generation",
                              "--max-cache-len", "128", "-o", out}),
            0);
  for (const char* f : {"openvino_model.xml", "openvino_model.bin", "config.json",
                        "generation_config.json", "tokenizer.json", "manifest.json"}) {
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  }
  EXPECT_FALSE(fs::exists(fs::path(out) / "openvino_prefill_model.xml"));  // one multi-token model
  if (!ovt::have_venv()) GTEST_SKIP() << ovt::skip_reason();
  const std::string prompt = "It is a truth universally acknowledged, that";
  auto [rc, text] = captured(run_generate, {demo, "--prompt", prompt, "--max-new-tokens", "32",
                                            "--greedy", "--ignore-eos", "--json"});
  ASSERT_EQ(rc, 0);
  const nlohmann::json ingot = nlohmann::json::parse(text);
  ASSERT_EQ(ingot["generated_ids"].size(), 32u);
  auto r = ovt::run_tool("genai_generate.py", {out, "--prompt", prompt, "--max-new-tokens", "32"});
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_TRUE(r.summary.is_object()) << r.log;
  EXPECT_EQ(r.summary["text"].get<std::string>(), ingot["text"].get<std::string>()) << r.log;
  EXPECT_TRUE(fs::exists(fs::path(out) / "openvino_tokenizer.xml"));  // made by the judge
}

// `ingot export --task generation --format openvino` on the multimodal and encoder-decoder
// fixtures writes every component as IR (openvino_<component>_model.xml, the decode as
// openvino_model.xml) and a manifest naming them and how they connect; with the venv,
// OpenVINO runs the first component on the fixture's processor output and equals
// transformers' output committed with the fixture (1e-4).
TEST(CliExportOpenVINO, MultimodalAndEncoderDecoderDirectoriesHoldEveryComponent) {
  struct Fixture {
    const char* folder;
    std::vector<std::string> components;
    const char* kind;  // manifest pipeline kind
    // The first component on the processor output == transformers' (empty: not checked).
    std::string input, input_file, output, output_file;
  };
  const std::vector<Fixture> fixtures = {
      {"vlm/llava",
       {"image_encoder", "multi_modal_projector", "language_model", "lm_head", "decode"},
       "vision-language",
       "pixel_values",
       "pixel_values.npy",
       "image_features",
       "image_features.npy"},
      {"vlm/qwen2_vl",
       {"image_encoder", "language_model", "lm_head", "decode"},
       "vision-language",
       "",
       "",
       "",
       ""},
      {"encdec/t5",
       {"encoder", "cross_kv", "decode"},
       "encoder-decoder",
       "input_ids",
       "input_ids.npy",
       "encoder_hidden_states",
       "encoder_hidden_states.npy"},
      {"whisper/whisper",
       {"encoder", "cross_kv", "decode"},
       "encoder-decoder",
       "input_features",
       "input_features.npy",
       "encoder_hidden_states",
       "encoder_hidden.npy"},
  };
  for (const Fixture& f : fixtures) {
    SCOPED_TRACE(f.folder);
    const std::string folder = testing::fixture_path(f.folder);
    ovt::ScratchDir tmp(std::string("cli_ov_gen_") + fs::path(f.folder).filename().string());
    const std::string out = (tmp.path() / "dir").string();
    ASSERT_EQ(call(run_export, {folder, "--format", "openvino", "--task", "generation",
                                "--max-cache-len", "64", "-o", out}),
              0);
    std::ifstream in(fs::path(out) / "manifest.json");
    const nlohmann::json manifest = nlohmann::json::parse(in);
    EXPECT_EQ(manifest["export_format"], "openvino");
    EXPECT_EQ(manifest["components"].size(), f.components.size());
    for (const std::string& c : f.components) {
      const std::string file =
          c == "decode" ? "openvino_model.xml" : "openvino_" + c + "_model.xml";
      EXPECT_EQ(manifest["components"].value(c, ""), file) << c;
      EXPECT_TRUE(fs::exists(fs::path(out) / file)) << file;
      EXPECT_TRUE(fs::exists(fs::path(out) / fs::path(file).replace_extension(".bin"))) << file;
    }
    EXPECT_EQ(manifest["pipeline"].value("kind", ""), f.kind) << manifest.dump(2);
    if (f.input.empty() || !ovt::have_venv()) continue;
    ovt::Cases cases(tmp.path() / "cases");
    cases.add({{f.input, formats::load_npy(folder + "/" + f.input_file)}},
              {{f.output, formats::load_npy(folder + "/" + f.output_file)}});
    const std::string first = "openvino_" + f.components[0] + "_model.xml";
    const nlohmann::json summary = cases.run(fs::path(out) / first, 1e-4);
    EXPECT_TRUE(summary.value("ok", false)) << summary.dump();
    EXPECT_TRUE(summary["worst"].contains(f.output)) << summary.dump();  // it was compared
    std::printf("  %s %s: OpenVINO vs transformers max|diff| %s\n", f.folder, first.c_str(),
                summary["worst"].value(f.output, nlohmann::json()).dump().c_str());
  }
}

}  // namespace
}  // namespace ingot::cli
