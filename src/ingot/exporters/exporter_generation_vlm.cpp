// Exporter::export_vision_language: the multimodal components of a vision-language
// model (seed 003's names), each a standalone program through the backend's stages:
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
// StaticCache tensors (same names, same order) as the decode component export_captured made, so one
// cache serves the prefill over merged embeddings and the decode loop. The merge itself
// (models::merge_image_features) stays outside the graphs, as in transformers.
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/qwen2_vl_vision.h"
#include "ingot/models/vision_language.h"
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

// Two example images (never the specialised size 1) with varied pixel values.
Tensor example_pixel_values(const models::ImageInput& in, DType dtype) {
  const int64_t n = 2 * in.channels * in.height * in.width;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 37) % 101) / 50.0f - 1.0f;
  return to(Tensor::from_vector(v, {2, in.channels, in.height, in.width}), dtype);
}

ExportOptions single_input_options(const NativeExportConfig& config, const std::string& component,
                                   const std::string& name, std::map<int, Dim> dims) {
  INGOT_CHECK(config.dynamic_shapes_json.empty(), ValueError,
              "[export_for_generation] the config of component '{}' has a dynamic_shapes spec; "
              "generation components set their own (images and tokens are symbolic): remove it",
              component);
  ExportOptions o;
  o.input_names = {name};
  o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor(std::move(dims))});
  o.prefer_deferred_runtime_asserts_over_guards =
      config.prefer_deferred_runtime_asserts_over_guards;
  return o;
}

}  // namespace

void Exporter::export_vision_language(models::VisionLanguageModel& model,
                                      const ComponentConfigs& configs,
                                      const GenerationExportOptions& g,
                                      std::map<std::string, std::unique_ptr<ExportArtifact>>& out) {
  INGOT_CHECK(g.batch == 1, NotSupportedError,
              "[export_for_generation] {}: the multimodal components take batch 1 (got batch {})",
              model.architecture(), g.batch);
  if (const std::optional<models::PatchInput> patches = model.patch_input()) {
    export_patch_encoder(model, *patches, configs, out);
  } else {
    export_image_encoder(model, configs, out);
  }
  export_language_model(model, configs, g, out);
}

void Exporter::export_patch_encoder(models::VisionLanguageModel& model,
                                    const models::PatchInput& patches,
                                    const ComponentConfigs& configs, Artifacts& out) {
  // Two example images of 2 x 3 merged tokens each (never the specialised size 1).
  const int64_t m = patches.spatial_merge_size, m2 = m * m;
  const Tensor grid =
      Tensor::from_vector(std::vector<int64_t>{1, 2 * m, 3 * m, 1, 2 * m, 3 * m}, {2, 3});
  const models::Qwen2VisionInputs side = models::qwen2_vl_vision_inputs(grid, m);
  const int64_t tokens = side.vision_segment_ids.size(0);
  std::vector<float> v(static_cast<size_t>(tokens * m2 * patches.patch_dim));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 37) % 101) / 50.0f - 1.0f;
  const Tensor pixel_values =
      to(Tensor::from_vector(v, {tokens, m2, patches.patch_dim}), model.compute_dtype());
  const NativeExportConfig& config = configs.at("image_encoder");
  auto encode = [&model](const Tensor& pv, const Tensor& pos, const Tensor& seg) {
    return std::map<std::string, Tensor>{{"image_embeds", model.encode_patches(pv, pos, seg)}};
  };
  TraceFn trace = [&](const ExportOptions& opts, PatchScope& scope) {
    return ingot::export_(
        &model, with_patches(scope, encode),
        std::tuple{pixel_values, side.vision_position_ids, side.vision_segment_ids}, opts);
  };
  ExportOptions o = single_input_options(config, "image_encoder", "pixel_values", {});
  const Dim image_tokens("image_tokens", 1,
                         backend() == "executorch" ? kMaxImageTokensExecutorch : kMaxImageTokens);
  o.input_names = {"pixel_values", "vision_position_ids", "vision_segment_ids"};
  o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, image_tokens}}),
                                           DynamicShapes::tensor({{0, image_tokens}}),
                                           DynamicShapes::tensor({{0, image_tokens}})});
  out["image_encoder"] = run_stages(model.architecture(), "generation", &model, trace, config, o);
  out["image_encoder"]->step_layout =
      step_layout_of(out["image_encoder"]->program, {generation::InputRole::kPixelValues,
                                                     generation::InputRole::kVisionPositionIds,
                                                     generation::InputRole::kVisionSegmentIds});
}

void Exporter::export_one_input(
    models::VisionLanguageModel& model, const std::string& component,
    const std::function<std::map<std::string, Tensor>(const Tensor&)>& fn, const Tensor& example,
    const std::string& input, generation::InputRole role, std::map<int, Dim> dims,
    const ComponentConfigs& configs, Artifacts& out) {
  const NativeExportConfig& config = configs.at(component);
  TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
    return ingot::export_(&model, with_patches(patches, fn), std::tuple{example}, opts);
  };
  out[component] = run_stages(model.architecture(), "generation", &model, trace, config,
                              single_input_options(config, component, input, std::move(dims)));
  out[component]->step_layout = step_layout_of(out[component]->program, {role});
}

void Exporter::export_image_encoder(models::VisionLanguageModel& model,
                                    const ComponentConfigs& configs, Artifacts& out) {
  auto export_one = [&](const std::string& component, auto fn, const Tensor& example,
                        const std::string& input, generation::InputRole role,
                        std::map<int, Dim> dims) {
    export_one_input(model, component, fn, example, input, role, std::move(dims), configs, out);
  };
  const Dim images("images", 1, kMaxImages);
  // image_encoder and multi_modal_projector, on two example images.
  const Tensor pixel_values = example_pixel_values(model.image_input(), model.compute_dtype());
  export_one("image_encoder",
             [&](const Tensor& pv) {
               return std::map<std::string, Tensor>{{"image_features", model.encode_images(pv)}};
             },
             pixel_values, "pixel_values", generation::InputRole::kPixelValues, {{0, images}});
  const Tensor features = model.encode_images(pixel_values);  // [2, patches, F]
  export_one("multi_modal_projector",
             [&](const Tensor& f) {
               return std::map<std::string, Tensor>{{"image_embeds", model.project(f)}};
             },
             features, "image_features", generation::InputRole::kImageFeatures, {{0, images}});
}

void Exporter::export_language_model(models::VisionLanguageModel& model,
                                     const ComponentConfigs& configs,
                                     const GenerationExportOptions& g, Artifacts& out) {
  const std::string arch = model.architecture();
  const Dim tokens("tokens", 1, g.max_cache_len);
  // language_model: the prefill over embeddings, on the example prompt's embeddings
  // and an empty cache of the decode component's shape.
  const Tensor embeds = model.embed(example_generation_prompt(1));  // [1, 4, hidden]
  nn::StaticCache cache(*model.cache_spec(), 1, g.max_cache_len);
  const nn::NamedTensors cache_tensors = cache.named_tensors();
  {
    const NativeExportConfig& config = configs.at("language_model");
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
    const Tensor positions =
        expand(reshape(arange(embeds.size(1), DType::I64), {1, 1, embeds.size(1)}),
               {3, 1, embeds.size(1)});
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(cache_tensors);
      if (mrope)
        return ingot::export_(&model, with_patches(patches, mrope_step),
                              std::tuple{embeds, contiguous(positions), example_cache}, opts);
      return ingot::export_(&model, with_patches(patches, step), std::tuple{embeds, example_cache},
                            opts);
    };
    std::vector<detail::ExtraStepInput> extra;
    if (mrope) extra.push_back({"position_ids", 2});
    out["language_model"] = run_stages(
        arch, "generation", &model, trace, config,
        detail::generation_component_options(config, g, cache_tensors, /*symbolic_tokens=*/true,
                                             "language_model", "inputs_embeds", false, extra));
    std::vector<generation::InputRole> leading{generation::InputRole::kInputsEmbeds};
    if (mrope) leading.push_back(generation::InputRole::kPositionIds);
    out["language_model"]->step_layout = step_layout_of(out["language_model"]->program, leading);
  }

  // lm_head over hidden states of any token count (the runtime passes the last one).
  export_one_input(
      model, "lm_head",
      [&](const Tensor& h) {
        return std::map<std::string, Tensor>{{"logits", model.lm_head(h)}};
      },
      embeds, "hidden_states", generation::InputRole::kHiddenStates, {{1, tokens}}, configs, out);
}

}  // namespace ingot::exporters
