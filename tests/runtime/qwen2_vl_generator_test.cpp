// Qwen2-VL through the framework's export_for_generation and the native Generator (issue
// 18, fixture of tools/reference/make_qwen2vl_fixtures.py): the components have seed 003's
// names (no multi_modal_projector: the merger is in the image encoder) with symbolic image
// tokens and prompt tokens; each program equals transformers' module on the fixture
// (1e-4); greedy generation equals transformers' generate for all 20 tokens with one image
// and with two, in memory and from a saved generation directory (M-RoPE positions in the
// prefill, rope_deltas in every decode step).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/models/vision_language.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/runtime/program_module.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;
using testing::max_abs_diff;

std::string qwen_dir() {
  return testing::fixture_path("vlm/qwen2_vl");
}
Tensor fixture(const std::string& name) {
  return formats::load_npy(qwen_dir() + "/" + name + ".npy");
}
std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

class Qwen2VLGeneration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = models::from_pretrained(qwen_dir());
    exporters::GenerationExportOptions o;
    o.max_cache_len = 160;
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
  static runtime::Generator generator() { return runtime::Generator(artifacts_->package()); }

  static std::shared_ptr<models::PretrainedModel> model_;
  static exporters::GenerationExport* artifacts_;
};
std::shared_ptr<models::PretrainedModel> Qwen2VLGeneration::model_;
exporters::GenerationExport* Qwen2VLGeneration::artifacts_;

TEST_F(Qwen2VLGeneration, ComponentsHaveTheSeedNamesWithoutAProjector) {
  std::vector<std::string> names;
  for (const auto& [name, a] : *artifacts_) names.push_back(name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"decode", "image_encoder", "language_model", "lm_head"}));
}

TEST_F(Qwen2VLGeneration, ImageEncoderTakesAnyNumberOfPatches) {
  runtime::ProgramModule encoder(program("image_encoder"));
  for (const char* suffix : {"", "_two"}) {
    SCOPED_TRACE(suffix);
    const Tensor pv = fixture(std::string("pixel_values") + suffix);
    const models::Qwen2VisionInputs side =
        models::qwen2_vl_vision_inputs(fixture(std::string("image_grid_thw") + suffix), 2);
    const int64_t tokens = side.vision_segment_ids.size(0);
    Tensor grouped = contiguous(reshape(pv, {SymInt(tokens), SymInt(4), SymInt(pv.size(1))}));
    Tensor embeds = encoder.run({grouped, side.vision_position_ids, side.vision_segment_ids}).at(0);
    ASSERT_EQ(embeds.size(0), tokens);
    // The first image's 30 tokens equal transformers' (attention stays within an image).
    EXPECT_LE(max_abs_diff(slice(embeds, 0, 0, 30), fixture("image_embeds")), 1e-4);
  }
}

TEST_F(Qwen2VLGeneration, LanguageModelAndLmHeadMatchTransformers) {
  runtime::ProgramModule lm(program("language_model"));
  runtime::ProgramModule head(program("lm_head"));
  auto vlm = std::dynamic_pointer_cast<models::VisionLanguageModel>(model_);
  nn::StaticCache cache(*vlm->cache_spec(), 1, 160);
  std::vector<Tensor> inputs{fixture("inputs_embeds"), fixture("position_ids")};
  for (const auto& [name, t] : cache.named_tensors()) inputs.push_back(t);
  Tensor hidden = lm.run(inputs).at(0);
  EXPECT_LE(max_abs_diff(hidden, fixture("last_hidden_state")), 1e-4);
  EXPECT_LE(max_abs_diff(head.run({fixture("last_hidden_state")}).at(0), fixture("logits")), 1e-4);
}

TEST_F(Qwen2VLGeneration, GreedyIdsEqualTransformers) {
  runtime::Generator gen = generator();
  EXPECT_EQ(gen.generate(ints(fixture("input_ids")), fixture("pixel_values"),
                         fixture("image_grid_thw"), greedy()),
            ints(fixture("greedy")));
  // Two images of different sizes, then one again (the cache and rope delta are reset).
  EXPECT_EQ(gen.generate(ints(fixture("input_ids_two")), fixture("pixel_values_two"),
                         fixture("image_grid_thw_two"), greedy()),
            ints(fixture("greedy_two")));
  EXPECT_EQ(gen.generate(ints(fixture("input_ids")), fixture("pixel_values"),
                         fixture("image_grid_thw"), greedy()),
            ints(fixture("greedy")));
}

TEST_F(Qwen2VLGeneration, MismatchedInputsAreClearErrors) {
  runtime::Generator gen = generator();
  const std::vector<int64_t> prompt = ints(fixture("input_ids"));
  // The big image's patches for the small image's grid.
  EXPECT_THROW(
      gen.generate(prompt, fixture("pixel_values_big"), fixture("image_grid_thw"), greedy()),
      ShapeError);
  // A grid whose tokens differ from the prompt's image tokens.
  EXPECT_THROW(
      gen.generate(prompt, fixture("pixel_values_big"), fixture("image_grid_thw_big"), greedy()),
      ValueError);
  // LLaVA-style [images, C, H, W] for a patch-input model.
  EXPECT_THROW(gen.generate(prompt, fixture("pixel_values"), greedy()), ValueError);
}

TEST_F(Qwen2VLGeneration, SavedDirectoryHasThePipelineAndGeneratesTheSameIds) {
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_qwen2vl_gen_" + std::to_string(::getpid()));
  artifacts_->save(dir.string(), qwen_dir());
  std::ifstream f(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  const nlohmann::json& p = manifest.at("pipeline");
  EXPECT_EQ(p.at("rope"), "mrope");
  EXPECT_EQ(p.at("image_input").at("kind"), "patches");
  EXPECT_EQ(p.at("image_input").at("spatial_merge_size"), 2);
  EXPECT_EQ(p.at("image_input").at("patch_dim"), 96);
  EXPECT_TRUE(fs::exists(dir / "preprocessor_config.json"));
  runtime::Generator gen = runtime::Generator::load(dir.string());
  EXPECT_EQ(gen.spatial_merge_size(), 2);
  EXPECT_EQ(gen.generate(ints(fixture("input_ids_two")), fixture("pixel_values_two"),
                         fixture("image_grid_thw_two"), greedy()),
            ints(fixture("greedy_two")));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot
