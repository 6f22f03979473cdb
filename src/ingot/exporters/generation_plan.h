// GenerationPlan: the components Exporter::export_for_generation traces for one model
// family, as data. Each component has its name, its trace (the step function on example
// arguments it owns), its stage-3 options (input names, dynamic shapes) and the roles of
// its leading inputs (the state tensors after them are recognised by name,
// step_layout_of). One builder per family; the Exporter picks the plan and walks it
// through its backend's stages (Exporter::trace_plan), so it names no model family.
//
//   decoder_plan           decode, or prefill + decode        exporter_generation.cpp
//   past_present_decoder_  decode (growing cache)             exporter_generation_past_present.cpp
//   plan
//   vision_language_plan   image_encoder [+ multi_modal_      exporter_generation_vlm.cpp
//                          projector], language_model, lm_head
//   encoder_decoder_plan   encoder, cross_kv, decode          exporter_generation_encdec.cpp
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/exporters/exporter.h"

namespace ingot::models {
class VisionLanguageModel;
class EncoderDecoderModel;
}  // namespace ingot::models

namespace ingot::exporters {

struct ComponentPlan {
  std::string name;
  TraceFn trace;
  ExportOptions options;
  std::vector<generation::InputRole> leading;
};

// A decoder's components on generate()'s captured calls: {"decode"} traced on the prompt
// call with multi_token_decode, else {"prefill", "decode"}; over (input_ids, StaticCache),
// with `mask_and_positions` (input_ids, attention_mask, position_ids, StaticCache).
GenerationPlan decoder_plan(models::PretrainedModel& model,
                            const std::map<std::string, CapturedCall>& calls,
                            const GenerationExportOptions& g, bool mask_and_positions);
// A text decoder's one "decode" in the growing past/present cache layout
// (CacheLayout::kPastPresent; exporter_generation_past_present.cpp). NotSupportedError
// for a vision-language model or a model without a KV cache.
GenerationPlan past_present_decoder_plan(models::PretrainedModel& model,
                                         const GenerationExportOptions& g);
// A vision-language model's multimodal components (batch 1); `backend` bounds the
// patch encoder's image tokens (ExecuTorch plans memory for the bound).
GenerationPlan vision_language_plan(models::VisionLanguageModel& model,
                                    const GenerationExportOptions& g, const std::string& backend);
// An encoder-decoder model's components (batch 1, multi-token decode).
GenerationPlan encoder_decoder_plan(models::EncoderDecoderModel& model,
                                    const GenerationExportOptions& g);

// Stage 3 of a component: its input names ("" for a dict of tensors keeping their own
// names) and their dynamic shapes; with `deferred_asserts`, unimplied guards become runtime
// asserts (trace_plan adds the config's choice and refuses a config's own spec).
ExportOptions plan_options(std::vector<std::string> names, std::vector<DynamicShapes> shapes,
                           bool deferred_asserts = false);
// An example tensor of `shape` with varied values in [-1, 1] (never all equal).
Tensor example_values(const std::vector<int64_t>& shape, DType dtype);

namespace detail {
// Stage 3 of a step over (first input, StaticCache), or with `mask_and_positions` over
// (input_ids, attention_mask, position_ids, StaticCache) (seed 003's decode layout): the
// token dim symbolic in [1, max_cache_len] when `symbolic_tokens`, the cache length with
// dynamic_cache_len. `extra`: inputs between the first and the cache, each with the axis
// of its token count (-1: all static); M-RoPE models: decode's rope_deltas [batch, 1],
// language_model's position_ids [3, 1, tokens].
struct ExtraStepInput {
  std::string name;
  int tokens_axis = -1;
};
ExportOptions generation_component_options(const GenerationExportOptions& g,
                                           const nn::NamedTensors& cache, bool symbolic_tokens,
                                           const std::string& first_input = "input_ids",
                                           bool mask_and_positions = false,
                                           const std::vector<ExtraStepInput>& extra = {});
}  // namespace detail

}  // namespace ingot::exporters
