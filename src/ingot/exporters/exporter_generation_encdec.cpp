// Exporter::export_encoder_decoder: the generation components of an encoder-decoder
// model (models/encoder_decoder.h; docs/generation.md), each a standalone program through
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
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

// A representative encoder input: ids 1, 2, ... (token inputs) or varied values in
// [-1, 1] (features) of the model's example shape.
Tensor example_encoder_input(const models::EncoderInput& in, int64_t vocab_hint) {
  int64_t n = 1;
  for (int64_t s : in.example_shape) n *= s;
  if (in.dtype == DType::I64) {
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < n; ++i) ids.push_back(1 + i % std::max<int64_t>(vocab_hint - 1, 1));
    return Tensor::from_vector(ids, in.example_shape);
  }
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(float((i * 37) % 101) / 50.0f - 1.0f);
  return to(Tensor::from_vector(v, in.example_shape), in.dtype);
}

void check_no_dynamic_shapes_spec(const NativeExportConfig& config, const std::string& component) {
  INGOT_CHECK(config.dynamic_shapes_json.empty(), ValueError,
              "[export_for_generation] the config of component '{}' has a dynamic_shapes spec; "
              "generation components set their own (source length and token count are "
              "symbolic): remove it",
              component);
}

}  // namespace

void Exporter::export_encoder_decoder(models::EncoderDecoderModel& model,
                                      const ComponentConfigs& configs,
                                      const GenerationExportOptions& g,
                                      std::map<std::string, std::unique_ptr<ExportArtifact>>& out) {
  const std::string arch = model.architecture();
  INGOT_CHECK(g.batch == 1, NotSupportedError,
              "[export_for_generation] {}: the encoder-decoder components take batch 1 (got {})",
              arch, g.batch);
  INGOT_CHECK(g.multi_token_decode, NotSupportedError,
              "[export_for_generation] {}: encoder-decoder models get one decode graph whose token "
              "count is symbolic (multi_token_decode); separate prefill / decode graphs are not "
              "supported for them",
              arch);
  const models::EncoderInput ei = model.encoder_input();
  const bool symbolic_source = !ei.symbolic_dims.empty();
  const Dim source("source", 1, ei.max_length);
  auto options = [&](const NativeExportConfig& config, const std::string& component) {
    check_no_dynamic_shapes_spec(config, component);
    ExportOptions o;
    o.prefer_deferred_runtime_asserts_over_guards =
        config.prefer_deferred_runtime_asserts_over_guards || g.dynamic_cache_len;
    return o;
  };

  // encoder, on a representative input.
  const Tensor example = example_encoder_input(ei, 32);
  {
    const NativeExportConfig& config = configs.at("encoder");
    ExportOptions o = options(config, "encoder");
    std::map<int, Dim> dims;
    for (int d : ei.symbolic_dims) dims.emplace(d, source);
    o.input_names = {ei.name};
    o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor(dims)});
    auto fn = [&model](const Tensor& x) {
      return std::map<std::string, Tensor>{{"encoder_hidden_states", model.encode(x)}};
    };
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      return ingot::export_(&model, with_patches(patches, fn), std::tuple{example}, opts);
    };
    out["encoder"] = run_stages(arch, "generation", &model, trace, config, o);
    out["encoder"]->step_layout =
        step_layout_of(out["encoder"]->program, {generation::InputRole::kEncoderInput});
  }

  // cross_kv over the example's encoder states.
  const Tensor states = model.encode(example);  // [1, source, d_model]
  std::map<int, Dim> states_dims;
  if (symbolic_source) states_dims.emplace(1, source);
  {
    const NativeExportConfig& config = configs.at("cross_kv");
    ExportOptions o = options(config, "cross_kv");
    o.input_names = {"encoder_hidden_states"};
    o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor(states_dims)});
    auto fn = [&model](const Tensor& h) { return model.cross_attention_cache(h).named(); };
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      return ingot::export_(&model, with_patches(patches, fn), std::tuple{states}, opts);
    };
    out["cross_kv"] = run_stages(arch, "generation", &model, trace, config, o);
    out["cross_kv"]->step_layout =
        step_layout_of(out["cross_kv"]->program, {generation::InputRole::kEncoderHiddenStates});
  }

  // decode: the example decoder prompt over the example's cross K/V and an empty cache.
  const std::map<std::string, Tensor> cross = model.cross_attention_cache(states).named();
  nn::StaticCache cache(*model.cache_spec(), 1, g.max_cache_len);
  const nn::NamedTensors cache_tensors = cache.named_tensors();
  {
    const NativeExportConfig& config = configs.at("decode");
    ExportOptions o = options(config, "decode");
    o.input_names = {"input_ids", "", ""};  // cross and cache tensors keep their own names
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
    o.dynamic_shapes = DynamicShapes::tuple(
        {DynamicShapes::tensor({{1, Dim("tokens", 1, g.max_cache_len)}}),
         DynamicShapes::dict(cross_shapes),
         g.dynamic_cache_len ? DynamicShapes::dict(cache_shapes) : DynamicShapes()});
    auto fn = [&model](const Tensor& ids, const std::map<std::string, Tensor>& c,
                       nn::StaticCache self_cache) {
      return std::map<std::string, Tensor>{
          {"logits", model.decode(ids, models::CrossAttentionCache::from_named(c), &self_cache)}};
    };
    const Tensor ids = example_generation_prompt(1);  // [1, 4]
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
      nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(cache_tensors);
      return ingot::export_(&model, with_patches(patches, fn),
                            std::tuple{ids, cross, example_cache}, opts);
    };
    out["decode"] = run_stages(arch, "generation", &model, trace, config, o);
    out["decode"]->step_layout =
        step_layout_of(out["decode"]->program, {generation::InputRole::kInputIds});
  }
}

}  // namespace ingot::exporters
