// LLaVA (LlavaForConditionalGeneration) == transformers 5.23 on the tiny random fixture
// of tools/reference/make_vlm_fixtures.py, component by component: the vision tower's
// selected features, the projector, the merged embeddings, the language model's hidden
// state and the full forward's logits. Tolerance: max |diff| <= 1e-4 (float32).
#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/models/vision_language.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

std::string llava_dir() {
  return fixture_path("vlm/llava");
}
Tensor fixture(const std::string& name) {
  return formats::load_npy(llava_dir() + "/" + name + ".npy");
}


std::shared_ptr<VisionLanguageModel> load_llava() {
  auto vlm = std::dynamic_pointer_cast<VisionLanguageModel>(from_pretrained(llava_dir()));
  EXPECT_NE(vlm, nullptr) << "LlavaForConditionalGeneration is not a VisionLanguageModel";
  return vlm;
}

TEST(Llava, ComponentsMatchTransformers) {
  auto vlm = load_llava();
  ASSERT_NE(vlm, nullptr);
  EXPECT_EQ(vlm->image_token_id(), 4);
  EXPECT_EQ(vlm->tokens_per_image(), 16);  // (32 / 8)^2 patches, class token dropped
  Tensor features = vlm->encode_images(fixture("pixel_values"));
  EXPECT_LE(max_abs_diff(features, fixture("image_features")), 1e-4);
  Tensor image_embeds = vlm->project(fixture("image_features"));
  EXPECT_LE(max_abs_diff(image_embeds, fixture("image_embeds")), 1e-4);
  Tensor ids = fixture("input_ids");
  Tensor merged =
      merge_image_features(vlm->embed(ids), ids, fixture("image_embeds"), vlm->image_token_id());
  EXPECT_LE(max_abs_diff(merged, fixture("inputs_embeds")), 1e-6);
  Tensor hidden = vlm->language_model(fixture("inputs_embeds"), Tensor(), nullptr);
  EXPECT_LE(max_abs_diff(hidden, fixture("last_hidden_state")), 1e-4);
  EXPECT_LE(max_abs_diff(vlm->lm_head(fixture("last_hidden_state")), fixture("logits")), 1e-4);
}

TEST(Llava, ForwardWithPixelValuesMatchesTransformers) {
  auto vlm = load_llava();
  ASSERT_NE(vlm, nullptr);
  ModelInputs in;
  in.input_ids = fixture("input_ids");
  in.attention_mask = fixture("attention_mask");
  in.pixel_values = fixture("pixel_values");
  EXPECT_LE(max_abs_diff(vlm->forward(in).logits, fixture("logits")), 1e-4);
}

TEST(Llava, MergeRejectsAMismatchedImageTokenCount) {
  auto vlm = load_llava();
  ASSERT_NE(vlm, nullptr);
  Tensor ids = Tensor::from_vector(std::vector<int64_t>{2, 4, 4, 5}, {1, 4});  // 2 image tokens
  try {
    merge_image_features(vlm->embed(ids), ids, fixture("image_embeds"), 4);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("2 image tokens"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("16 feature rows"), std::string::npos) << e.what();
  }
}

TEST(Llava, RejectsAWrongImageSize) {
  auto vlm = load_llava();
  ASSERT_NE(vlm, nullptr);
  try {
    vlm->encode_images(zeros({1, 3, 16, 16}, DType::F32));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("pixel_values must be [images, 3, 32, 32]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ingot::models
