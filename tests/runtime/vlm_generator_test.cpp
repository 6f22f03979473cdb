// LLaVA through the framework's export_for_generation and the native Generator (issue 18,
// fixture of tools/reference/make_vlm_fixtures.py): the components have seed 003's names
// and symbolic image / token counts, each program equals transformers' module on the
// fixture (1e-4), and greedy generation after the image prompt equals transformers'
// generate for all 20 tokens — in memory and from a saved generation directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/models/vision_language.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::max_abs_diff;

std::string llava_dir() {
  return testing::fixture_path("vlm/llava");
}
Tensor fixture(const std::string& name) {
  return formats::load_npy(llava_dir() + "/" + name + ".npy");
}

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

class LlavaGeneration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = models::from_pretrained(llava_dir());
    exporters::GenerationExportOptions o;
    o.max_cache_len = 64;
    artifacts_ = new exporters::GenerationExport(exporters::NativeExporter().export_for_generation(
        *model_, exporters::NativeExportConfig(), o));
  }
  static void TearDownTestSuite() {
    delete artifacts_;
    model_.reset();
  }
  static const ExportedProgram& program(const std::string& name) {
    return artifacts_->at(name)->program;
  }
  static runtime::GenerateOptions greedy() {
    runtime::GenerateOptions go;
    go.max_new_tokens = 20;
    return go;
  }

  static std::shared_ptr<models::PretrainedModel> model_;
  static exporters::GenerationExport* artifacts_;
};
std::shared_ptr<models::PretrainedModel> LlavaGeneration::model_;
exporters::GenerationExport* LlavaGeneration::artifacts_;

TEST_F(LlavaGeneration, ComponentsHaveTheSeedNames) {
  std::vector<std::string> names;
  for (const auto& [name, a] : *artifacts_) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"decode", "image_encoder", "language_model", "lm_head",
                                             "multi_modal_projector"}));
}

TEST_F(LlavaGeneration, ImageEncoderAndProjectorTakeAnyNumberOfImages) {
  runtime::ProgramModule encoder(program("image_encoder"));
  runtime::ProgramModule projector(program("multi_modal_projector"));
  Tensor pv = fixture("pixel_values");  // [1, 3, 32, 32]
  for (int64_t n : {1, 3}) {
    Tensor batch = cat(std::vector<Tensor>(size_t(n), pv), 0);
    Tensor features = encoder.run({batch}).at(0);
    Tensor embeds = projector.run({features}).at(0);
    ASSERT_EQ(features.size(0), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_LE(max_abs_diff(slice(features, 0, i, i + 1), fixture("image_features")), 1e-4) << n;
      EXPECT_LE(max_abs_diff(slice(embeds, 0, i, i + 1), fixture("image_embeds")), 1e-4) << n;
    }
  }
}

TEST_F(LlavaGeneration, LanguageModelAndLmHeadMatchTransformers) {
  runtime::ProgramModule lm(program("language_model"));
  runtime::ProgramModule head(program("lm_head"));
  auto vlm = std::dynamic_pointer_cast<models::VisionLanguageModel>(model_);
  nn::StaticCache cache(*vlm->cache_spec(), 1, 64);
  std::vector<Tensor> inputs{fixture("inputs_embeds")};  // [1, 27, 48]
  for (const auto& [name, t] : cache.named_tensors()) inputs.push_back(t);
  Tensor hidden = lm.run(inputs).at(0);
  EXPECT_LE(max_abs_diff(hidden, fixture("last_hidden_state")), 1e-4);
  EXPECT_EQ(ints(cache.named_tensors().back().second), std::vector<int64_t>{27});  // position
  EXPECT_LE(max_abs_diff(head.run({fixture("last_hidden_state")}).at(0), fixture("logits")), 1e-4);
}

TEST_F(LlavaGeneration, GreedyIdsEqualTransformers) {
  runtime::Generator gen(artifacts_->package());
  const std::vector<int64_t> prompt = ints(fixture("input_ids"));
  EXPECT_EQ(gen.generate(prompt, fixture("pixel_values"), greedy()), ints(fixture("greedy")));
  // Twice: the cache is reset between generations.
  EXPECT_EQ(gen.generate(prompt, fixture("pixel_values"), greedy()), ints(fixture("greedy")));
}

// Separate prefill / decode graphs and a cache length chosen at load time: the
// language model shares the decode graph's (symbolic) cache.
TEST(LlavaGenerationOptions, DynamicCacheLengthAndSeparatePrefill) {
  auto model = models::from_pretrained(llava_dir());
  exporters::GenerationExportOptions o;
  o.max_cache_len = 64;
  o.multi_token_decode = false;
  o.dynamic_cache_len = true;
  auto artifacts =
      exporters::NativeExporter().export_for_generation(*model, exporters::NativeExportConfig(), o);
  EXPECT_TRUE(artifacts.contains("prefill"));
  runtime::Generator gen(artifacts.package(), /*max_cache_len=*/50);
  EXPECT_EQ(gen.max_cache_len(), 50);
  runtime::GenerateOptions go;
  go.max_new_tokens = 20;
  EXPECT_EQ(gen.generate(ints(fixture("input_ids")), fixture("pixel_values"), go),
            ints(fixture("greedy")));
}

TEST_F(LlavaGeneration, SavedDirectoryHasThePipelineAndGeneratesTheSameIds) {
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_llava_gen_" + std::to_string(::getpid()));
  artifacts_->save(dir.string(), llava_dir());
  std::ifstream f(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  EXPECT_EQ(manifest["pipeline"]["kind"], "vision-language");
  EXPECT_EQ(manifest["pipeline"]["image_token_id"], 4);
  EXPECT_EQ(manifest["pipeline"]["embed_tokens"]["tensor"],
            "language_model.model.embed_tokens.weight");
  EXPECT_EQ(manifest["components"].size(), 5u);
  EXPECT_TRUE(fs::exists(dir / "processor_config.json"));
  runtime::Generator gen = runtime::Generator::load(dir.string());
  ASSERT_TRUE(gen.is_vision_language());
  EXPECT_EQ(gen.generate(ints(fixture("input_ids")), fixture("pixel_values"), greedy()),
            ints(fixture("greedy")));
  // A prompt whose image tokens do not match the images is refused by name.
  std::vector<int64_t> short_prompt{2, 4, 4, 9};
  EXPECT_THROW(gen.generate(short_prompt, fixture("pixel_values"), greedy()), ValueError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot
