// Qwen2-VL (Qwen2VLForConditionalGeneration) == transformers 5.23 on the tiny random
// fixture of tools/reference/make_qwen2vl_fixtures.py, component by component: the vision
// side inputs from image_grid_thw, the vision blocks' output, the merged image embeddings,
// the M-RoPE positions and rope delta, the merged text embeddings, the language model's
// hidden state and the full forward's logits. Tolerance: max |diff| <= 1e-4 (float32);
// positions exactly.
#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/models/vision_language.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;

std::string qwen_dir() {
  return fixture_path("vlm/qwen2_vl");
}
Tensor fixture(const std::string& name) {
  return formats::load_npy(qwen_dir() + "/" + name + ".npy");
}

std::shared_ptr<VisionLanguageModel> load_qwen() {
  auto vlm = std::dynamic_pointer_cast<VisionLanguageModel>(from_pretrained(qwen_dir()));
  EXPECT_NE(vlm, nullptr) << "Qwen2VLForConditionalGeneration is not a VisionLanguageModel";
  return vlm;
}

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return {c.data<int64_t>(), c.data<int64_t>() + c.numel()};
}

TEST(Qwen2VL, VisionInputsMatchTransformers) {
  // Grid (1, 10, 12): 120 patches, 30 merged tokens of 2 x 2 patches.
  Qwen2VisionInputs side = qwen2_vl_vision_inputs(fixture("image_grid_thw"), 2);
  EXPECT_EQ(side.vision_position_ids.shape_string(), "[30, 4, 2]");
  EXPECT_EQ(values(side.vision_position_ids), values(fixture("vision_position_ids")));
  EXPECT_EQ(side.tokens_per_image, std::vector<int64_t>{30});
  // Two images: segments 0 then 1, in token order.
  side = qwen2_vl_vision_inputs(fixture("image_grid_thw_two"), 2);
  std::vector<int64_t> seg = values(side.vision_segment_ids);
  ASSERT_EQ(seg.size(), size_t(30 + 63));
  EXPECT_EQ(seg.front(), 0);
  EXPECT_EQ(seg[29], 0);
  EXPECT_EQ(seg[30], 1);
  EXPECT_EQ(seg.back(), 1);
}

TEST(Qwen2VL, ComponentsMatchTransformers) {
  auto vlm = load_qwen();
  ASSERT_NE(vlm, nullptr);
  EXPECT_EQ(vlm->image_token_id(), 5);
  EXPECT_FALSE(vlm->has_projector());
  EXPECT_TRUE(vlm->multimodal_rope());
  ASSERT_TRUE(vlm->patch_input().has_value());
  EXPECT_EQ(vlm->patch_input()->patch_dim, 3 * 2 * 4 * 4);
  const Tensor grid = fixture("image_grid_thw");
  Qwen2VisionInputs side = qwen2_vl_vision_inputs(grid, 2);
  Tensor pv = reshape(fixture("pixel_values"), {SymInt(30), SymInt(4), SymInt(96)});
  auto tower = std::dynamic_pointer_cast<Qwen2VisionTower>(vlm->child("visual"));
  ASSERT_NE(tower, nullptr);
  Tensor hidden = tower->encode(pv, side.vision_position_ids, side.vision_segment_ids);
  EXPECT_LE(max_abs_diff(hidden, fixture("vision_hidden")), 1e-4);
  Tensor embeds = vlm->encode_patches(pv, side.vision_position_ids, side.vision_segment_ids);
  EXPECT_LE(max_abs_diff(embeds, fixture("image_embeds")), 1e-4);

  Tensor ids = fixture("input_ids");
  MropePositions pos = mrope_position_ids(ids, 5, grid, 2);
  EXPECT_EQ(values(pos.position_ids), values(fixture("position_ids")));
  EXPECT_EQ(pos.rope_delta, values(fixture("rope_deltas")).at(0));
  EXPECT_EQ(pos.rope_delta, -24);
  Tensor merged = merge_image_features(vlm->embed(ids), ids, unsqueeze(fixture("image_embeds"), 0),
                                       vlm->image_token_id());
  EXPECT_LE(max_abs_diff(merged, fixture("inputs_embeds")), 1e-6);
  Tensor last = vlm->language_model(fixture("inputs_embeds"), pos.position_ids, nullptr);
  EXPECT_LE(max_abs_diff(last, fixture("last_hidden_state")), 1e-4);
  EXPECT_LE(max_abs_diff(vlm->lm_head(fixture("last_hidden_state")), fixture("logits")), 1e-4);
  // Without the M-RoPE positions the hidden state differs: the sections matter.
  Tensor plain = vlm->language_model(fixture("inputs_embeds"), Tensor(), nullptr);
  EXPECT_GT(max_abs_diff(plain, fixture("last_hidden_state")), 1e-3);
}

TEST(Qwen2VL, ForwardWithPixelValuesMatchesTransformers) {
  auto vlm = load_qwen();
  ASSERT_NE(vlm, nullptr);
  ModelInputs in;
  in.input_ids = fixture("input_ids");
  in.pixel_values = fixture("pixel_values");
  in.image_grid_thw = fixture("image_grid_thw");
  EXPECT_LE(max_abs_diff(vlm->forward(in).logits, fixture("logits")), 1e-4);
}

TEST(Qwen2VL, ErrorsNameTheInput) {
  auto vlm = load_qwen();
  ASSERT_NE(vlm, nullptr);
  const Tensor ids = fixture("input_ids");
  // The big image's grid for the small image's 30 tokens.
  try {
    mrope_position_ids(ids, 5, fixture("image_grid_thw_big"), 2);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("image_grid_thw"), std::string::npos) << e.what();
  }
  // Two images for a prompt with one.
  EXPECT_THROW(mrope_position_ids(ids, 5, fixture("image_grid_thw_two"), 2), ValueError);
  EXPECT_THROW(
      qwen2_vl_vision_inputs(Tensor::from_vector(std::vector<int64_t>{1, 3, 4}, {1, 3}), 2),
      ValueError);  // h not a multiple of the merge size
  EXPECT_THROW(qwen2_vl_vision_inputs(Tensor::from_vector(std::vector<int64_t>{1, 4}, {1, 2}), 2),
               ShapeError);
  ModelInputs in;
  in.input_ids = ids;
  in.pixel_values = fixture("pixel_values");
  EXPECT_THROW(vlm->forward(in), ValueError);  // no image_grid_thw
  in.image_grid_thw = fixture("image_grid_thw");
  in.pixel_values = slice(fixture("pixel_values"), 0, 0, 100);
  EXPECT_THROW(vlm->forward(in), ShapeError);  // 100 patches, not whole tokens
}

}  // namespace
}  // namespace ingot::models
