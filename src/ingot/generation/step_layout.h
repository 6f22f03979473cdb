// StepLayout: what each user input of a generation component holds, in the component's
// input order. The exporter that traced the component writes it (it chose the inputs);
// every runner reads it to bind its tensors, so no runner guesses an input's meaning from
// its name. It travels in the generation manifest (generation/manifest.h).
//
//   decode of a text model:   input_ids, key_cache.0, value_cache.0, ..., cache_position
//   seed 003's decode layout: input_ids, attention_mask, position_ids, <cache>
//   M-RoPE decode (Qwen2-VL): input_ids, rope_deltas, <cache>
//   encoder-decoder decode:   input_ids, cross_key_cache.N, cross_value_cache.N, <cache>
//   growing (past/present):   input_ids, attention_mask, position_ids,
//                             past_key_values.N.key, past_key_values.N.value (ONNX GenAI)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::generation {

// The meaning of one component input. Its spelling in the manifest is role_name().
enum class InputRole {
  kInputIds,             // [batch, tokens] int64 token ids
  kInputsEmbeds,         // [batch, tokens, hidden] embeddings (a VLM's language model)
  kAttentionMask,        // seed 003's [batch, 1, tokens, cache slots] bool mask
  kPositionIds,          // [batch, tokens] or M-RoPE's [3, batch, tokens]
  kRopeDeltas,           // [batch, 1] M-RoPE decode position shift
  kKeyCache,             // [batch, kv_heads, cache slots, head_dim] of layer `layer`
  kValueCache,           // likewise
  kCachePosition,        // [1] int64: slots already written
  kCrossKey,             // an encoder-decoder's cross-attention keys of layer `layer`
  kCrossValue,           // likewise values
  kEncoderInput,         // an encoder's input (input_ids, input_features)
  kEncoderHiddenStates,  // cross_kv's input
  kPixelValues,          // an image encoder's pixels or flattened patches
  kVisionPositionIds,    // a patch encoder's [image tokens, m*m, 2] row / column ids
  kVisionSegmentIds,     // a patch encoder's [image tokens] image index
  kImageFeatures,        // the projector's input
  kHiddenStates,         // lm_head's input
  kPaddingMask,          // [batch, past + tokens] int64 0/1 (the growing-cache layout)
  kPastKey,              // [batch, kv_heads, past, head_dim] keys of layer `layer`; the
                         // component returns them grown by its tokens (present.N.key)
  kPastValue,            // likewise values
};

std::string_view role_name(InputRole role);
// The role spelled `name` (role_name's inverse); nullopt for an unknown spelling.
std::optional<InputRole> role_from_name(std::string_view name);
// Whether the role is part of the KV cache the runner allocates and binds in place.
bool is_cache_role(InputRole role);

struct StepInput {
  std::string name;  // the component's input name
  InputRole role;
  int64_t layer = -1;  // the decoder layer of a per-layer role (caches), else -1
};

struct StepLayout {
  std::vector<StepInput> inputs;  // the component's user inputs, in its input order

  // Index into `inputs` of the first input with `role`, nullopt when none.
  std::optional<size_t> find(InputRole role) const;
  bool has(InputRole role) const { return find(role).has_value(); }
  // Number of inputs with `role`.
  size_t count(InputRole role) const;
};

}  // namespace ingot::generation
