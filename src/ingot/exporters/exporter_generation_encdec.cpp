// encoder_decoder_plan: the generation components of an encoder-decoder
// model (models/encdec/encoder_decoder.h; docs/generation.md), each a standalone program through
// the backend's stages:
//
//   encoder   encoder input (input_ids [1, source] for T5)   -> encoder_hidden_states
//   cross_kv  encoder_hidden_states [1, source, d_model]      -> cross_key_cache.N,
//                                                                cross_value_cache.N
//   decode    (input_ids [1, tokens], {cross_*_cache.N}, StaticCache) -> logits
//
// `source` (the encoder length) and `tokens` are symbolic; the StaticCache (key_cache.N,
// value_cache.N, cache_position) is the decoder's self-attention cache, written in place
// as in the decoder-only decode. The cross-attention K/V are computed once per input by
// cross_kv (rather than inside decode's first step, which would need a data-dependent
// branch in a static graph) and passed unchanged to every decode call.
#include <limits>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_plan.h"
#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

// A representative encoder input: ids 1, 2, ... (token inputs) or varied values in
// [-1, 1] (features) of the model's example shape.
Tensor example_encoder_input(const models::EncoderInput& in, int64_t vocab_hint) {
  if (in.dtype != DType::I64) return example_values(in.example_shape, in.dtype);
  int64_t n = 1;
  for (int64_t s : in.example_shape) n *= s;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(1 + i % std::max<int64_t>(vocab_hint - 1, 1));
  return Tensor::from_vector(ids, in.example_shape);
}

}  // namespace

GenerationPlan encoder_decoder_plan(models::EncoderDecoderModel& model,
                                    const GenerationExportOptions& g) {
  const std::string arch = model.architecture();
  INGOT_CHECK(g.batch == 1, NotSupportedError,
              "[export_for_generation] {}: the encoder-decoder components take batch 1 (got {})",
              arch, g.batch);
  const models::EncoderInput ei = model.encoder_input();
  const bool symbolic_source = !ei.symbolic_dims.empty();
  const Dim source("source", 1, ei.max_length);
  // Stage 3: the input names and dynamic shapes (runtime asserts with a dynamic cache).
  auto options = [&](std::vector<std::string> names, std::vector<DynamicShapes> shapes) {
    return plan_options(std::move(names), std::move(shapes), g.dynamic_cache_len);
  };
  GenerationPlan plan;

  // encoder, on a representative input.
  const Tensor example = example_encoder_input(ei, 32);
  std::map<int, Dim> source_dims;
  for (int d : ei.symbolic_dims) source_dims.emplace(d, source);
  auto encode = [&model](const Tensor& x) {
    return std::map<std::string, Tensor>{{"encoder_hidden_states", model.encode(x)}};
  };
  plan.push_back({"encoder",
                  [&model, encode, example](const ExportOptions& opts, PatchScope& patches) {
                    return ingot::export_(&model, with_patches(patches, encode),
                                          std::tuple{example}, opts);
                  },
                  options({ei.name}, {DynamicShapes::tensor(source_dims)}),
                  {generation::InputRole::kEncoderInput}});

  // cross_kv over the example's encoder states.
  const Tensor states = model.encode(example);  // [1, source, d_model]
  std::map<int, Dim> states_dims;
  if (symbolic_source) states_dims.emplace(1, source);
  auto cross_kv = [&model](const Tensor& h) { return model.cross_attention_cache(h).named(); };
  plan.push_back({"cross_kv",
                  [&model, cross_kv, states](const ExportOptions& opts, PatchScope& patches) {
                    return ingot::export_(&model, with_patches(patches, cross_kv),
                                          std::tuple{states}, opts);
                  },
                  options({"encoder_hidden_states"}, {DynamicShapes::tensor(states_dims)}),
                  {generation::InputRole::kEncoderHiddenStates}});

  // decode: the example decoder prompt over the example's cross K/V and an empty cache.
  const std::map<std::string, Tensor> cross = model.cross_attention_cache(states).named();
  nn::StaticCache cache(*model.cache_spec(), 1, g.max_cache_len);
  const nn::NamedTensors cache_tensors = cache.named_tensors();
  std::map<std::string, DynamicShapes> cross_shapes, cache_shapes;
  for (const auto& [name, t] : cross) {
    cross_shapes.emplace(name,
                         DynamicShapes::tensor(symbolic_source ? std::map<int, Dim>{{2, source}}
                                                               : std::map<int, Dim>{}));
  }
  if (g.dynamic_cache_len) {
    const Dim len("cache_len", 2, std::numeric_limits<int32_t>::max());
    for (const auto& [name, t] : cache_tensors)
      if (t.dim() == 4) cache_shapes.emplace(name, DynamicShapes::tensor({{2, len}}));
  }
  auto decode = [&model](const Tensor& ids, const std::map<std::string, Tensor>& c,
                         nn::StaticCache self_cache) {
    return std::map<std::string, Tensor>{
        {"logits", model.decode(ids, models::CrossAttentionCache::from_named(c), &self_cache)}};
  };
  const Tensor ids = example_generation_prompt(1);  // [1, 4]
  plan.push_back(
      {"decode",
       [&model, decode, ids, cross, cache_tensors](const ExportOptions& opts, PatchScope& patches) {
         nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(cache_tensors);
         return ingot::export_(&model, with_patches(patches, decode),
                               std::tuple{ids, cross, example_cache}, opts);
       },
       // cross and cache tensors keep their own names
       options({"input_ids", "", ""},
               {DynamicShapes::tensor({{1, Dim("tokens", 1, g.max_cache_len)}}),
                DynamicShapes::dict(cross_shapes),
                g.dynamic_cache_len ? DynamicShapes::dict(cache_shapes) : DynamicShapes()}),
       {generation::InputRole::kInputIds}});
  return plan;
}

}  // namespace ingot::exporters
