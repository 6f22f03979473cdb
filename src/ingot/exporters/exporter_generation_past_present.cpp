// past_present_decoder_plan: a decoder's one "decode" component in the growing-cache
// layout (CacheLayout::kPastPresent, generation_capture.h) — what ONNX Runtime GenAI
// drives with past_present_share_buffer false: it feeds the previous step's present.N.*
// back as past_key_values.N.*, the full 0/1 attention mask and the positions, and
// allocates nothing in place. The step is the decoder's forward over an nn::KVCache built
// on the past tensors; the KVCache's concatenations are the present outputs.
#include <limits>

#include "ingot/exporters/generation_plan.h"
#include "ingot/exporters/past_present_names.h"
#include "ingot/models/vision/vision_language.h"

namespace ingot::exporters {

namespace {

// The step traced: (input_ids, attention_mask, position_ids, {past_key_values.N.*}) ->
// {logits, present.N.key, present.N.value}.
std::map<std::string, Tensor> past_present_step(models::PretrainedModel& model, int64_t layers,
                                                const Tensor& input_ids,
                                                const Tensor& attention_mask,
                                                const Tensor& position_ids,
                                                const std::map<std::string, Tensor>& past) {
  std::vector<Tensor> keys, values;
  for (int64_t l = 0; l < layers; ++l) {
    keys.push_back(past.at(past_key_name(size_t(l))));
    values.push_back(past.at(past_value_name(size_t(l))));
  }
  nn::KVCache cache(std::move(keys), std::move(values));
  models::ModelInputs in;
  in.input_ids = input_ids;
  in.attention_mask = attention_mask;
  in.position_ids = position_ids;
  in.cache = &cache;
  std::map<std::string, Tensor> out{{"logits", model.forward(in).logits}};
  for (const auto& [name, t] : cache.named_tensors()) {
    // KVCache names its layers key_cache.N / value_cache.N.
    const bool key = name.starts_with("key_cache.");
    const size_t layer = std::stoul(name.substr(name.find('.') + 1));
    out.emplace(key ? present_key_name(layer) : present_value_name(layer), t);
  }
  return out;
}

}  // namespace

GenerationPlan past_present_decoder_plan(models::PretrainedModel& model,
                                         const GenerationExportOptions& g) {
  INGOT_CHECK(!dynamic_cast<const models::VisionLanguageModel*>(&model), NotSupportedError,
              "[export_for_generation] {}: the growing past/present cache layout is for text "
              "decoders; a vision-language model's components need the static layout",
              model.architecture());
  const std::optional<nn::CacheSpec> spec = model.cache_spec();
  INGOT_CHECK(spec.has_value(), NotSupportedError,
              "[export_for_generation] {} has no KV cache: no past/present decode step",
              model.architecture());
  // Examples: `past` cached tokens and `tokens` new ones, all distinct sizes above 1 so
  // no dim specialises; the mask covers past + tokens.
  const int64_t batch = g.batch, past = 5, tokens = 3;
  INGOT_CHECK(g.max_cache_len > past + tokens, ValueError,
              "[export_for_generation] max_cache_len {} must exceed {} for the past/present "
              "layout's example",
              g.max_cache_len, past + tokens);
  std::vector<int64_t> ids, positions;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tokens; ++t) {
      ids.push_back(1 + t);
      positions.push_back(past + t);
    }
  const Tensor input_ids = Tensor::from_vector(ids, {batch, tokens});
  const Tensor position_ids = Tensor::from_vector(positions, {batch, tokens});
  const Tensor mask = Tensor::from_vector(std::vector<int64_t>(size_t(batch * (past + tokens)), 1),
                                          {batch, past + tokens});
  std::map<std::string, Tensor> cache;
  for (int64_t l = 0; l < spec->num_layers; ++l)
    for (const std::string& name : {past_key_name(size_t(l)), past_value_name(size_t(l))})
      cache.emplace(name,
                    example_values({batch, spec->num_kv_heads, past, spec->head_dim}, spec->dtype));

  // Stage 3: tokens, past and the mask's length are symbols; the mask's length equals
  // past + tokens, which the model's broadcast asserts (a runtime assert: ONNX drops it).
  const Dim tokens_dim("sequence_length", 1, g.max_cache_len);
  const Dim past_dim("past_sequence_length", 0, g.max_cache_len);
  const Dim total_dim("total_sequence_length", 1, g.max_cache_len);
  std::map<std::string, DynamicShapes> per_tensor;
  for (const auto& [name, t] : cache)
    per_tensor.emplace(name, DynamicShapes::tensor({{2, past_dim}}));
  ExportOptions options = plan_options(
      {"input_ids", "attention_mask", "position_ids", ""},
      {DynamicShapes::tensor({{1, tokens_dim}}), DynamicShapes::tensor({{1, total_dim}}),
       DynamicShapes::tensor({{1, tokens_dim}}), DynamicShapes::dict(per_tensor)},
      /*deferred_asserts=*/true);

  const int64_t layers = spec->num_layers;
  TraceFn trace = [=, &model](const ExportOptions& opts, PatchScope& patches) {
    auto step = [&model, layers](const Tensor& ids, const Tensor& m, const Tensor& p,
                                 const std::map<std::string, Tensor>& kv) {
      return past_present_step(model, layers, ids, m, p, kv);
    };
    return ingot::export_(&model, with_patches(patches, step),
                          std::tuple{input_ids, mask, position_ids, cache}, opts);
  };
  return {{"decode",
           std::move(trace),
           std::move(options),
           {generation::InputRole::kInputIds, generation::InputRole::kPaddingMask,
            generation::InputRole::kPositionIds}}};
}

}  // namespace ingot::exporters
