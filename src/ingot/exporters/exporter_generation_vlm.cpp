// Exporter::export_vision_language: the multimodal components of a vision-language
// model (seed 003's names), each a standalone program through the backend's stages:
//
//   image_encoder          pixel_values [images, C, H, W]          -> image_features
//   multi_modal_projector  image_features [images, patches, F]     -> image_embeds
//   language_model         (inputs_embeds [1, tokens, hidden], StaticCache) -> last_hidden_state
//   lm_head                hidden [1, tokens, hidden]              -> logits
//
// `images` and `tokens` are symbolic. The language model writes the same StaticCache
// tensors (same names, same order) as the decode component export_captured made, so
// one cache serves the prefill over merged embeddings and the decode loop. The merge
// itself (models::merge_image_features) stays outside the graphs, as in transformers.
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/exporter.h"
#include "ingot/models/vision_language.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

constexpr int64_t kMaxImages = 256;

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
  const std::string arch = model.architecture();
  auto export_one = [&](const std::string& component, auto fn, const Tensor& example,
                        const std::string& input, std::map<int, Dim> dims) {
    const NativeExportConfig& config = configs.at(component);
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      return ingot::export_(&model, with_patches(patches, fn), std::tuple{example}, opts);
    };
    out[component] = run_stages(arch, "generation", &model, trace, config,
                                single_input_options(config, component, input, std::move(dims)));
  };
  const Dim images("images", 1, kMaxImages);
  const Dim tokens("tokens", 1, g.max_cache_len);

  // image_encoder and multi_modal_projector, on two example images.
  const Tensor pixel_values = example_pixel_values(model.image_input(), model.compute_dtype());
  export_one("image_encoder",
             [&](const Tensor& pv) {
               return std::map<std::string, Tensor>{{"image_features", model.encode_images(pv)}};
             },
             pixel_values, "pixel_values", {{0, images}});
  const Tensor features = model.encode_images(pixel_values);  // [2, patches, F]
  export_one("multi_modal_projector",
             [&](const Tensor& f) {
               return std::map<std::string, Tensor>{{"image_embeds", model.project(f)}};
             },
             features, "image_features", {{0, images}});

  // language_model: the prefill over embeddings, on the example prompt's embeddings
  // and an empty cache of the decode component's shape.
  const Tensor embeds = model.embed(example_generation_prompt(1));  // [1, 4, hidden]
  nn::StaticCache cache(*model.cache_spec(), 1, g.max_cache_len);
  const nn::NamedTensors cache_tensors = cache.named_tensors();
  {
    const NativeExportConfig& config = configs.at("language_model");
    auto step = [&model](const Tensor& inputs_embeds, nn::StaticCache c) {
      return std::map<std::string, Tensor>{
          {"last_hidden_state", model.language_model(inputs_embeds, &c)}};
    };
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(cache_tensors);
      return ingot::export_(&model, with_patches(patches, step), std::tuple{embeds, example_cache},
                            opts);
    };
    out["language_model"] = run_stages(
        arch, "generation", &model, trace, config,
        detail::generation_component_options(config, g, cache_tensors, /*symbolic_tokens=*/true,
                                             "language_model", "inputs_embeds"));
  }

  // lm_head over hidden states of any token count (the runtime passes the last one).
  export_one("lm_head",
             [&](const Tensor& h) {
               return std::map<std::string, Tensor>{{"logits", model.lm_head(h)}};
             },
             embeds, "hidden_states", {{1, tokens}});
}

}  // namespace ingot::exporters
