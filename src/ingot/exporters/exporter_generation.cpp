// Exporter::export_for_generation / export_captured: the one generation export of every
// backend (seed 003). The model family's plan (generation_plan.h; the decoder's is here:
// one step function on generate()'s captured calls) gives each component's example
// arguments and dynamic shapes; trace_plan sends each through the backend's stages like
// any other export.
#include <limits>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/generation_plan.h"
#include "ingot/exporters/quantize.h"
#include "ingot/exporters/skips.h"
#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

// ── Stage 3 (generation): the dynamic shapes of (input_ids or inputs_embeds, cache) ──
ExportOptions plan_options(std::vector<std::string> names, std::vector<DynamicShapes> shapes,
                           bool deferred_asserts) {
  ExportOptions o;
  o.input_names = std::move(names);
  o.dynamic_shapes = DynamicShapes::tuple(std::move(shapes));
  o.prefer_deferred_runtime_asserts_over_guards = deferred_asserts;
  return o;
}

ExportOptions detail::generation_component_options(const GenerationExportOptions& g,
                                                   const nn::NamedTensors& cache,
                                                   bool symbolic_tokens,
                                                   const std::string& first_input,
                                                   bool mask_and_positions,
                                                   const std::vector<ExtraStepInput>& extra) {
  const Dim tokens("tokens", 1, g.max_cache_len);
  const Dim len("cache_len", 2, std::numeric_limits<int32_t>::max());
  // The inputs before the cache, with the axis of their token count; attention_mask is
  // [batch, 1, tokens, cache slots], position_ids [batch, tokens].
  std::vector<ExtraStepInput> inputs{{first_input, 1}};
  if (mask_and_positions) inputs = {{"input_ids", 1}, {"attention_mask", 2}, {"position_ids", 1}};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  std::vector<std::string> names;
  std::vector<DynamicShapes> shapes;
  for (const ExtraStepInput& in : inputs) {
    std::map<int, Dim> dims;
    if (symbolic_tokens && in.tokens_axis >= 0) dims.emplace(in.tokens_axis, tokens);
    if (g.dynamic_cache_len && in.name == "attention_mask") dims.emplace(3, len);
    names.push_back(in.name);
    shapes.push_back(DynamicShapes::tensor(dims));
  }
  // The cache tensors keep their names (key_cache.N, value_cache.N, cache_position).
  std::map<std::string, DynamicShapes> per_tensor;
  for (const auto& [name, t] : cache)
    if (g.dynamic_cache_len && t.dim() == 4)
      per_tensor.emplace(name, DynamicShapes::tensor({{2, len}}));
  names.push_back("");
  shapes.push_back(g.dynamic_cache_len ? DynamicShapes::dict(per_tensor) : DynamicShapes());
  // With a dynamic cache length, tokens <= cache_len cannot follow from the declared
  // ranges; it is asserted when the program runs.
  return plan_options(std::move(names), std::move(shapes), g.dynamic_cache_len);
}

Tensor example_values(const std::vector<int64_t>& shape, DType dtype) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 37) % 101) / 50.0f - 1.0f;
  return to(Tensor::from_vector(v, shape), dtype);
}

GenerationExport Exporter::export_for_generation(models::PretrainedModel& model,
                                                 const ComponentConfigs& configs,
                                                 const GenerationExportOptions& options) {
  // ── Stage 1: skip table (before running generate on a model that cannot decode) ──
  check_not_skipped(model.architecture(), backend(), "generation");
  INGOT_CHECK(options.max_cache_len >= 8 && options.batch >= 1, ValueError,
              "[export_for_generation] max_cache_len must be >= 8 and batch >= 1 (got {} and {})",
              options.max_cache_len, options.batch);
  GenerationExportOptions g = options;
  adjust_generation_options(configs, g);
  GenerationPlan plan;
  std::map<std::string, CapturedCall> calls;  // the decoder plan's examples
  if (g.cache_layout == CacheLayout::kPastPresent) {
    INGOT_CHECK(!dynamic_cast<models::EncoderDecoderModel*>(&model), NotSupportedError,
                "[export_for_generation] {}: the growing past/present cache layout is for "
                "decoders; an encoder-decoder model's components need the static layout",
                model.architecture());
    g.multi_token_decode = true;  // one graph: the prompt (past 0) and every step
    g.dynamic_cache_len = false;
    plan = past_present_decoder_plan(model, g);
  } else if (auto* encdec = dynamic_cast<models::EncoderDecoderModel*>(&model)) {
    // Its decode serves the decoder prompt and single tokens: always multi-token.
    g.multi_token_decode = true;
    plan = encoder_decoder_plan(*encdec, g);
  } else {
    auto* vlm = dynamic_cast<models::VisionLanguageModel*>(&model);
    INGOT_CHECK(!vlm || g.batch == 1, NotSupportedError,
                "[export_for_generation] {}: the multimodal components take batch 1 (got batch {})",
                model.architecture(), g.batch);
    calls = decompose_for_generation(model, example_generation_prompt(g.batch), g);
    plan = decoder_plan(model, calls, g,
                        g.mask_and_position_inputs.value_or(generation_takes_mask_and_positions()));
    if (vlm) {
      for (ComponentPlan& c : vision_language_plan(*vlm, g, backend()))
        plan.push_back(std::move(c));
    }
  }
  // Calibration (one run of the model, shared by every component it reaches): the first
  // component whose quantiser has a dataset gives it (else none: no statistics).
  const NativeExportConfig* calibrated = &configs.at(plan.front().name);
  for (const ComponentPlan& c : plan) {
    check_quantizer_rules(model, configs.at(c.name).quantizer);
    if (calibrated->quantizer.dataset.empty()) calibrated = &configs.at(c.name);
  }
  prepare_quantizer(model, *calibrated, g.model_folder);
  GenerationExport out;
  out.components = trace_plan(model, plan, configs);
  out.manifest = generation_manifest(model, out.components, g);
  add_generation_components(model, configs, g, out);
  return out;
}

GenerationExport Exporter::export_captured(models::PretrainedModel& model,
                                           const std::map<std::string, CapturedCall>& calls,
                                           const ComponentConfigs& configs,
                                           const GenerationExportOptions& g) {
  INGOT_CHECK(g.cache_layout == CacheLayout::kStatic, ValueError,
              "[export_captured] captured calls are traced over a StaticCache: the past/present "
              "layout is export_for_generation's (options.cache_layout)");
  const bool mask_and_positions =
      g.mask_and_position_inputs.value_or(generation_takes_mask_and_positions());
  GenerationExport out;
  out.components = trace_plan(model, decoder_plan(model, calls, g, mask_and_positions), configs);
  out.manifest = generation_manifest(model, out.components, g);
  return out;
}

GenerationComponents Exporter::trace_plan(models::PretrainedModel& model,
                                          const GenerationPlan& plan,
                                          const ComponentConfigs& configs) {
  GenerationComponents out;
  for (const ComponentPlan& c : plan) {
    const NativeExportConfig& config = configs.at(c.name);
    INGOT_CHECK(config.dynamic_shapes_json.empty(), ValueError,
                "[export_for_generation] the config of component '{}' has a dynamic_shapes spec; "
                "generation components set their own (token counts, images and source lengths "
                "are symbolic, the cache length with dynamic_cache_len): remove it",
                c.name);
    ExportOptions options = c.options;
    options.prefer_deferred_runtime_asserts_over_guards |=
        config.prefer_deferred_runtime_asserts_over_guards;
    std::unique_ptr<ExportArtifact>& artifact = out[c.name];
    artifact = run_stages(model.architecture(), "generation", &model, c.trace, config, options);
    artifact->step_layout = step_layout_of(artifact->program, c.leading);
  }
  return out;
}

GenerationPlan decoder_plan(models::PretrainedModel& model,
                            const std::map<std::string, CapturedCall>& calls,
                            const GenerationExportOptions& g, bool mask_and_positions) {
  // The step every component traces: the decoder's forward over a StaticCache (with
  // seed 003's layout, also over the caller's mask and positions).
  auto step = [&model](const Tensor& input_ids, nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.cache = &cache;
    return std::map<std::string, Tensor>{{"logits", model.forward(in).logits}};
  };
  auto step_with_mask = [&model](const Tensor& input_ids, const Tensor& attention_mask,
                                 const Tensor& position_ids, nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.attention_mask = attention_mask;
    in.position_ids = position_ids;
    in.sliding_windows_on_4d_mask = true;  // the mask is the full layers'; windows in-graph
    in.cache = &cache;
    return std::map<std::string, Tensor>{{"logits", model.forward(in).logits}};
  };
  // M-RoPE models (Qwen2-VL): the decode step's positions are shifted by rope_deltas
  // [batch, 1], an input of its own (the caller's position_ids carry it in seed 003's layout).
  auto step_with_deltas = [&model](const Tensor& input_ids, const Tensor& rope_deltas,
                                   nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.rope_deltas = rope_deltas;
    in.cache = &cache;
    return std::map<std::string, Tensor>{{"logits", model.forward(in).logits}};
  };
  const auto* vlm = dynamic_cast<const models::VisionLanguageModel*>(&model);
  const bool deltas = vlm && vlm->multimodal_rope() && !mask_and_positions;
  std::vector<detail::ExtraStepInput> extra;
  if (deltas) extra.push_back({"rope_deltas", -1});
  std::vector<generation::InputRole> leading{generation::InputRole::kInputIds};
  if (mask_and_positions) {
    leading.push_back(generation::InputRole::kAttentionMask);
    leading.push_back(generation::InputRole::kPositionIds);
  } else if (deltas) {
    leading.push_back(generation::InputRole::kRopeDeltas);
  }
  // A component: its name, the captured call it is traced on, whether its token count is
  // symbolic. The multi-token decode is traced on the prompt call.
  struct Component {
    const char *name, *example_call;
    bool symbolic_tokens;
  };
  const std::vector<Component> components =
      g.multi_token_decode
          ? std::vector<Component>{{"decode", "prefill", true}}
          : std::vector<Component>{{"prefill", "prefill", true}, {"decode", "decode", false}};
  GenerationPlan plan;
  for (const Component& c : components) {
    auto it = calls.find(c.example_call);
    INGOT_CHECK(it != calls.end(), ValueError,
                "[export_captured] no captured '{}' call, the example of component '{}'",
                c.example_call, c.name);
    const CapturedCall call = it->second;
    check_cache_derives_mask_and_positions(call, c.example_call);
    TraceFn trace = [=, &model](const ExportOptions& opts, PatchScope& patches) {
      nn::StaticCache example_cache = nn::StaticCache::from_named_tensors(call.cache);
      if (mask_and_positions)
        return ingot::export_(&model, with_patches(patches, step_with_mask),
                              std::tuple{call.input_ids, example_causal_mask(call),
                                         contiguous(to(call.position_ids, DType::I64)),
                                         example_cache},
                              opts);
      if (deltas)
        return ingot::export_(
            &model, with_patches(patches, step_with_deltas),
            std::tuple{call.input_ids, zeros({call.input_ids.size(0), 1}, DType::I64),
                       example_cache},
            opts);
      return ingot::export_(&model, with_patches(patches, step),
                            std::tuple{call.input_ids, example_cache}, opts);
    };
    plan.push_back({c.name, std::move(trace),
                    detail::generation_component_options(g, call.cache, c.symbolic_tokens,
                                                         "input_ids", mask_and_positions, extra),
                    leading});
  }
  return plan;
}

}  // namespace ingot::exporters
