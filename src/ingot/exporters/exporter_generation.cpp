// Exporter::export_for_generation / export_captured: the one generation export of every
// backend (seed 003). One step function, one capture, one place that builds the
// components' example arguments and dynamic shapes; each component then goes through
// the backend's stages like any other export.
#include <limits>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/skips.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/vision_language.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {

namespace {

// A generation component: which captured call is its example and whether its token
// count is symbolic.
struct Component {
  const char* name;
  const char* example_call;
  bool symbolic_tokens;
};

std::vector<Component> components_of(const GenerationExportOptions& g) {
  if (g.multi_token_decode) return {{"decode", "prefill", true}};  // traced on the prompt call
  return {{"prefill", "prefill", true}, {"decode", "decode", false}};
}

}  // namespace

// ── Stage 3 (generation): the dynamic shapes of (input_ids or inputs_embeds, cache) ──
ExportOptions detail::generation_component_options(
    const NativeExportConfig& config, const GenerationExportOptions& g,
    const nn::NamedTensors& cache, bool symbolic_tokens, const std::string& component,
    const std::string& first_input, bool mask_and_positions,
    const std::vector<ExtraStepInput>& extra) {
  INGOT_CHECK(config.dynamic_shapes_json.empty(), ValueError,
              "[export_for_generation] the config of component '{}' has a dynamic_shapes spec; "
              "generation components set their own (the token count is symbolic in prefill and "
              "multi-token decode, the cache length with dynamic_cache_len): remove it",
              component);
  ExportOptions o;
  // Cache tensors are named key_cache.N, value_cache.N, cache_position (no prefix).
  o.input_names = {first_input, ""};
  std::map<int, Dim> ids_dims;
  if (symbolic_tokens) ids_dims.emplace(1, Dim("tokens", 1, g.max_cache_len));
  DynamicShapes cache_shapes;
  if (g.dynamic_cache_len) {
    std::map<std::string, DynamicShapes> per_tensor;
    const Dim len("cache_len", 2, std::numeric_limits<int32_t>::max());
    for (const auto& [name, t] : cache) {
      if (t.dim() == 4) per_tensor.emplace(name, DynamicShapes::tensor({{2, len}}));
    }
    cache_shapes = DynamicShapes::dict(per_tensor);
  }
  if (mask_and_positions) {
    // attention_mask [batch, 1, tokens, cache slots], position_ids [batch, tokens].
    o.input_names = {"input_ids", "attention_mask", "position_ids", ""};
    std::map<int, Dim> mask_dims, pos_dims;
    if (symbolic_tokens) {
      mask_dims.emplace(2, Dim("tokens", 1, g.max_cache_len));
      pos_dims.emplace(1, Dim("tokens", 1, g.max_cache_len));
    }
    if (g.dynamic_cache_len)
      mask_dims.emplace(3, Dim("cache_len", 2, std::numeric_limits<int32_t>::max()));
    o.dynamic_shapes =
        DynamicShapes::tuple({DynamicShapes::tensor(ids_dims), DynamicShapes::tensor(mask_dims),
                              DynamicShapes::tensor(pos_dims), cache_shapes});
  } else {
    std::vector<DynamicShapes> shapes{DynamicShapes::tensor(ids_dims)};
    o.input_names = {first_input};
    for (const ExtraStepInput& e : extra) {
      std::map<int, Dim> dims;
      if (symbolic_tokens && e.tokens_axis >= 0)
        dims.emplace(e.tokens_axis, Dim("tokens", 1, g.max_cache_len));
      shapes.push_back(DynamicShapes::tensor(dims));
      o.input_names.push_back(e.name);
    }
    shapes.push_back(cache_shapes);
    o.input_names.push_back("");
    o.dynamic_shapes = DynamicShapes::tuple(shapes);
  }
  // With a dynamic cache length, tokens <= cache_len cannot follow from the declared
  // ranges; it is asserted when the program runs.
  o.prefer_deferred_runtime_asserts_over_guards =
      config.prefer_deferred_runtime_asserts_over_guards || g.dynamic_cache_len;
  return o;
}

GenerationExport Exporter::export_for_generation(models::PretrainedModel& model,
                                                 const ComponentConfigs& configs,
                                                 const GenerationExportOptions& g) {
  // ── Stage 1: skip table (before running generate on a model that cannot decode) ──
  check_not_skipped(model.architecture(), backend(), "generation");
  INGOT_CHECK(g.max_cache_len >= 8 && g.batch >= 1, ValueError,
              "[export_for_generation] max_cache_len must be >= 8 and batch >= 1 (got {} and {})",
              g.max_cache_len, g.batch);
  GenerationExport out;
  if (auto* encdec = dynamic_cast<models::EncoderDecoderModel*>(&model)) {
    export_encoder_decoder(*encdec, configs, g, out.components);
  } else {
    out.components =
        std::move(export_captured(
                      model, decompose_for_generation(model, example_generation_prompt(g.batch), g),
                      configs, g)
                      .components);
    if (auto* vlm = dynamic_cast<models::VisionLanguageModel*>(&model))
      export_vision_language(*vlm, configs, g, out.components);
  }
  out.manifest = generation_manifest(model, out.components, g);
  return out;
}

GenerationExport Exporter::export_captured(models::PretrainedModel& model,
                                           const std::map<std::string, CapturedCall>& calls,
                                           const ComponentConfigs& configs,
                                           const GenerationExportOptions& g) {
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
  const bool mask_and_positions =
      g.mask_and_position_inputs.value_or(generation_takes_mask_and_positions());
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
  GenerationExport out;
  for (const Component& c : components_of(g)) {
    auto it = calls.find(c.example_call);
    INGOT_CHECK(it != calls.end(), ValueError,
                "[export_captured] no captured '{}' call, the example of component '{}'",
                c.example_call, c.name);
    const CapturedCall& call = it->second;
    check_cache_derives_mask_and_positions(call, c.example_call);
    const NativeExportConfig& config = configs.at(c.name);
    TraceFn trace = [&](const ExportOptions& opts, PatchScope& patches) {
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
    std::unique_ptr<ExportArtifact>& artifact = out.components[c.name];
    artifact = run_stages(
        model.architecture(), "generation", &model, trace, config,
        detail::generation_component_options(config, g, call.cache, c.symbolic_tokens, c.name,
                                             "input_ids", mask_and_positions, extra));
    artifact->step_layout = step_layout_of(artifact->program, leading);
  }
  out.manifest = generation_manifest(model, out.components, g);
  return out;
}

}  // namespace ingot::exporters
