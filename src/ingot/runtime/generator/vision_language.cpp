// runtime::Generator's vision-language path (the manifest's vision-language pipeline):
// the image encoder (+ projector) runs once, its embeddings replace the prompt's image
// tokens, the language model prefills the cache over them and lm_head gives the first
// token; then the decode loop (docs/generation.md).
#include "ingot/models/vision/vision_language.h"

#include "ingot/models/vision/qwen2_vl_vision.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator/generator.h"

namespace ingot::runtime {

void Generator::set_vision_language(const generation::VisionLanguagePipeline& p,
                                    const ExportedProgram& decode) {
  for (const char* name : {"image_encoder", "language_model", "lm_head"}) {
    INGOT_CHECK(manifest_.has_component(name), ValueError,
                "[Generator] a vision-language generator needs a '{}' component (export with "
                "exporters::Exporter::export_for_generation)",
                name);
  }
  INGOT_CHECK(!p.mrope || rope_deltas_.defined(), ValueError,
              "[Generator] an M-RoPE model's decode component takes rope_deltas; this one does not "
              "(export with exporters::Exporter::export_for_generation)");
  const bool patches = p.image_input.patches;
  INGOT_CHECK(!patches || !projector_, ValueError,
              "[Generator] a patch-input model has no multi_modal_projector component");
  // The table lives in the decode program's state (as exported, before any rewrite).
  INGOT_CHECK(p.embed_tokens_component == "decode", ValueError,
              "[Generator] the text embedding table must be in the decode component (the manifest "
              "names '{}')",
              p.embed_tokens_component);
  auto table = decode.state.find(p.embed_tokens_tensor);
  INGOT_CHECK(table != decode.state.end() && table->second.dim() == 2, ValueError,
              "[Generator] the decode component has no embedding table '{}'",
              p.embed_tokens_tensor);
  // The decode copy's table: the same values, possibly held in bf16 (a gathered row is
  // turned back into the exported dtype, exactly).
  embed_dtype_ = table->second.dtype();
  const auto& rewritten = decode_->program().state;
  auto held = rewritten.find(p.embed_tokens_tensor);
  embed_tokens_ = held != rewritten.end() && held->second.dim() == 2 ? held->second : table->second;
  image_token_id_ = p.image_token_id;
  spatial_merge_size_ = patches ? p.image_input.spatial_merge_size : 0;
  mrope_ = p.mrope;
  language_model_layout_ = manifest_.layout("language_model");
}

std::vector<int64_t> Generator::generate(const std::vector<int64_t>& prompt,
                                         const Tensor& pixel_values, const Tensor& image_grid_thw,
                                         const GenerateOptions& o, GenerationStats* stats) {
  INGOT_CHECK(is_vision_language() && spatial_merge_size_ > 0, ValueError,
              "[Generator] pixel_values with image_grid_thw given but these components are not a "
              "patch-input vision-language model's (Qwen2-VL)");
  return generate_after(
      prompt,
      [&](const Tensor& ids) { return prefill_with_images(ids, pixel_values, image_grid_thw); }, o,
      stats);
}

std::vector<int64_t> Generator::generate(const std::vector<int64_t>& prompt,
                                         const Tensor& pixel_values, const GenerateOptions& o,
                                         GenerationStats* stats) {
  INGOT_CHECK(is_vision_language(), ValueError,
              "[Generator] pixel_values given but these components are not a vision-language "
              "model's (the manifest has no vision-language pipeline)");
  INGOT_CHECK(spatial_merge_size_ == 0, ValueError,
              "[Generator] this model takes flattened patches with image_grid_thw (Qwen2-VL): "
              "pass both");
  return generate_after(
      prompt, [&](const Tensor& ids) { return prefill_with_images(ids, pixel_values, Tensor()); },
      o, stats);
}

Tensor Generator::encode_patches(const Tensor& pixel_values, const Tensor& image_grid_thw) {
  const int64_t m2 = spatial_merge_size_ * spatial_merge_size_;
  const models::Qwen2VisionInputs side =
      models::qwen2_vl_vision_inputs(image_grid_thw, spatial_merge_size_);
  const int64_t tokens = side.vision_segment_ids.size(0);
  INGOT_CHECK(
      pixel_values.defined() && pixel_values.dim() == 2 && pixel_values.size(0) == tokens * m2,
      ShapeError,
      "[Generator] pixel_values must be [patches, C*T*P*P] with the {} patches "
      "image_grid_thw gives (sum of t * h * w), got {}",
      tokens * m2, pixel_values.defined() ? pixel_values.shape_string() : "nothing");
  Tensor grouped = reshape(contiguous(to(pixel_values, DType::F32)),
                           {SymInt(tokens), SymInt(m2), SymInt(pixel_values.size(1))});
  Tensor embeds =
      image_encoder_->run({contiguous(grouped), side.vision_position_ids, side.vision_segment_ids})
          .at(0);               // [tokens, hidden]
  return unsqueeze(embeds, 0);  // [1, tokens, hidden]
}

Tensor Generator::prefill_with_images(const Tensor& ids, const Tensor& pixel_values,
                                      const Tensor& image_grid_thw) {
  Tensor image_embeds;
  if (spatial_merge_size_ > 0) {
    image_embeds = encode_patches(pixel_values, image_grid_thw);
  } else {
    INGOT_CHECK(pixel_values.defined() && pixel_values.dim() == 4, ShapeError,
                "[Generator] pixel_values must be [images, channels, height, width], got {}",
                pixel_values.defined() ? pixel_values.shape_string() : "nothing");
    Tensor features = image_encoder_->run({pixel_values}).at(0);  // [images, patches, F]
    image_embeds = projector_ ? projector_->run({features}).at(0) : features;
  }
  Tensor text = embedding(embed_tokens_, ids);  // [1, n, hidden]
  if (text.dtype() != embed_dtype_) text = to(text, embed_dtype_);
  Tensor embeds = models::merge_image_features(text, ids, image_embeds, image_token_id_);
  Tensor positions;  // M-RoPE: [3, 1, n]
  if (mrope_) {
    models::MropePositions p =
        models::mrope_position_ids(ids, image_token_id_, image_grid_thw, spatial_merge_size_);
    positions = p.position_ids;
    rope_deltas_.data<int64_t>()[0] = p.rope_delta;
  }
  Tensor hidden =
      language_model_->run(step_inputs(language_model_layout_, embeds, positions)).at(0);
  // [1, n, hidden]
  const int64_t n = hidden.size(1);
  return lm_head_->run({contiguous(slice(hidden, 1, n - 1, n))}).at(0);  // [1, 1, vocab]
}

}  // namespace ingot::runtime
