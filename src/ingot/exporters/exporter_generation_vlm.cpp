// vision_language_plan: the multimodal components of a vision-language model (seed 003's
// names), each a standalone program through the backend's stages:
//
//   image_encoder          pixel_values [images, C, H, W]          -> image_features
//   multi_modal_projector  image_features [images, patches, F]     -> image_embeds
//   language_model         (inputs_embeds [1, tokens, hidden], StaticCache) -> last_hidden_state
//   lm_head                hidden [1, tokens, hidden]              -> logits
//
// A patch-input model (Qwen2-VL) has no projector (its merger is in the image encoder):
//
//   image_encoder   (pixel_values [image_tokens, m*m, patch_dim], vision_position_ids
//                    [image_tokens, m*m, 2], vision_segment_ids [image_tokens]) -> image_embeds
//   language_model  (inputs_embeds, position_ids [3, 1, tokens], StaticCache) -> last_hidden_state
//
// `images`, `image_tokens` and `tokens` are symbolic. The language model writes the same
// StaticCache tensors (same names, same order) as the decoder plan's decode, so one
// cache serves the prefill over merged embeddings and the decode loop. The merge itself
// (models::merge_image_features) stays outside the graphs, as in transformers.
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_plan.h"
#include "ingot/models/vision/qwen2_vl_vision.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

constexpr int64_t kMaxImages = 256;
constexpr int64_t kMaxImageTokens = 1 << 16;
// ExecuTorch plans memory for the upper bounds of symbolic sizes: the patch encoder's
// per-image attention mask and scores are [image_tokens, image_tokens] (x heads), which at
// 65536 tokens is tens of GiB and the runtime's allocation fails when the program loads.
// 1024 merged tokens (4096 patches: one 896 x 896 image at patch 14, merge 2) keeps the
// plan to a few MiB per head.
constexpr int64_t kMaxImageTokensExecutorch = 1024;

// A component of one tensor input `input` (its dynamic `dims`), traced on `example`.
ComponentPlan one_input(models::VisionLanguageModel& model, const std::string& component,
                        std::function<std::map<std::string, Tensor>(const Tensor&)> fn,
                        const Tensor& example, const std::string& input, generation::InputRole role,
                        std::map<int, Dim> dims) {
  TraceFn trace = [&model, fn, example](const ExportOptions& opts, PatchScope& patches) {
    return ingot::export_(&model, with_patches(patches, fn), std::tuple{example}, opts);
  };
  return {
      component, std::move(trace), plan_options({input}, {DynamicShapes::tensor(dims)}), {role}};
}

// Qwen2-VL's image_encoder over flattened patches and their side inputs.
ComponentPlan patch_encoder(models::VisionLanguageModel& model, const models::PatchInput& patches,
                            const std::string& backend) {
  // Two example images of 2 x 3 merged tokens each (never the specialised size 1).
  const int64_t m = patches.spatial_merge_size, m2 = m * m;
  const Tensor grid =
      Tensor::from_vector(std::vector<int64_t>{1, 2 * m, 3 * m, 1, 2 * m, 3 * m}, {2, 3});
  const models::Qwen2VisionInputs side = models::qwen2_vl_vision_inputs(grid, m);
  const int64_t tokens = side.vision_segment_ids.size(0);
  const Tensor pixel_values =
      example_values({tokens, m2, patches.patch_dim}, model.compute_dtype());
  auto encode = [&model](const Tensor& pv, const Tensor& pos, const Tensor& seg) {
    return std::map<std::string, Tensor>{{"image_embeds", model.encode_patches(pv, pos, seg)}};
  };
  TraceFn trace = [&model, encode, pixel_values, side](const ExportOptions& opts,
                                                       PatchScope& scope) {
    return ingot::export_(
        &model, with_patches(scope, encode),
        std::tuple{pixel_values, side.vision_position_ids, side.vision_segment_ids}, opts);
  };
  const Dim image_tokens("image_tokens", 1,
                         backend == "executorch" ? kMaxImageTokensExecutorch : kMaxImageTokens);
  return {"image_encoder",
          std::move(trace),
          plan_options({"pixel_values", "vision_position_ids", "vision_segment_ids"},
                       {DynamicShapes::tensor({{0, image_tokens}}),
                        DynamicShapes::tensor({{0, image_tokens}}),
                        DynamicShapes::tensor({{0, image_tokens}})}),
          {generation::InputRole::kPixelValues, generation::InputRole::kVisionPositionIds,
           generation::InputRole::kVisionSegmentIds}};
}

}  // namespace

GenerationPlan vision_language_plan(models::VisionLanguageModel& model,
                                    const GenerationExportOptions& g, const std::string& backend) {
  INGOT_CHECK(g.batch == 1, NotSupportedError,
              "[export_for_generation] {}: the multimodal components take batch 1 (got batch {})",
              model.architecture(), g.batch);
  GenerationPlan plan;
  if (const std::optional<models::PatchInput> patches = model.patch_input()) {
    plan.push_back(patch_encoder(model, *patches, backend));
  } else {
    // image_encoder and multi_modal_projector, on two example images.
    const Dim images("images", 1, kMaxImages);
    const models::ImageInput in = model.image_input();
    const Tensor pixel_values =
        example_values({2, in.channels, in.height, in.width}, model.compute_dtype());
    plan.push_back(one_input(
        model, "image_encoder",
        [&model](const Tensor& pv) {
          return std::map<std::string, Tensor>{{"image_features", model.encode_images(pv)}};
        },
        pixel_values, "pixel_values", generation::InputRole::kPixelValues, {{0, images}}));
    const Tensor features = model.encode_images(pixel_values);  // [2, patches, F]
    plan.push_back(one_input(
        model, "multi_modal_projector",
        [&model](const Tensor& f) {
          return std::map<std::string, Tensor>{{"image_embeds", model.project(f)}};
        },
        features, "image_features", generation::InputRole::kImageFeatures, {{0, images}}));
  }

  // language_model: the prefill over embeddings, on the example prompt's embeddings
  // and an empty cache of the decode component's shape.
  const Tensor embeds = model.embed(example_generation_prompt(1));  // [1, 4, hidden]
  nn::StaticCache cache(*model.cache_spec(), 1, g.max_cache_len);
  const nn::NamedTensors cache_tensors = cache.named_tensors();
  auto step = [&model](const Tensor& inputs_embeds, nn::StaticCache c) {
    return std::map<std::string, Tensor>{
        {"last_hidden_state", model.language_model(inputs_embeds, Tensor(), &c)}};
  };
  // M-RoPE: the caller's [3, 1, tokens] positions (models::mrope_position_ids).
  auto mrope_step = [&model](const Tensor& inputs_embeds, const Tensor& position_ids,
                             nn::StaticCache c) {
    return std::map<std::string, Tensor>{
        {"last_hidden_state", model.language_model(inputs_embeds, position_ids, &c)}};
  };
  const bool mrope = model.multimodal_rope();
  const Tensor positions = contiguous(expand(
      reshape(arange(embeds.size(1), DType::I64), {1, 1, embeds.size(1)}), {3, 1, embeds.size(1)}));
  TraceFn trace = [=, &model](const ExportOptions& opts, PatchScope& patches) {
    nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(cache_tensors);
    if (mrope)
      return ingot::export_(&model, with_patches(patches, mrope_step),
                            std::tuple{embeds, positions, example_cache}, opts);
    return ingot::export_(&model, with_patches(patches, step), std::tuple{embeds, example_cache},
                          opts);
  };
  std::vector<detail::ExtraStepInput> extra;
  std::vector<generation::InputRole> leading{generation::InputRole::kInputsEmbeds};
  if (mrope) {
    extra.push_back({"position_ids", 2});
    leading.push_back(generation::InputRole::kPositionIds);
  }
  plan.push_back({"language_model", std::move(trace),
                  detail::generation_component_options(g, cache_tensors, /*symbolic_tokens=*/true,
                                                       "inputs_embeds", false, extra),
                  leading});

  // lm_head over hidden states of any token count (the runtime passes the last one).
  plan.push_back(one_input(model, "lm_head",
                           [&model](const Tensor& h) {
                             return std::map<std::string, Tensor>{{"logits", model.lm_head(h)}};
                           },
                           embeds, "hidden_states", generation::InputRole::kHiddenStates,
                           {{1, Dim("tokens", 1, g.max_cache_len)}}));
  return plan;
}

}  // namespace ingot::exporters
