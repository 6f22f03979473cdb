// decompose_for_generation (seed 003): the capture of generate()'s real forward calls,
// the examples every backend's generation components are traced on.
//
// generate() runs a few tokens with a StaticCache and a hook around forward that records
// each call; the prompt call is the example of the prefill (or merged multi-token
// decode) graph, the first single-token call that of the one-token decode graph. The
// captured calls are plain data: a caller may inspect or edit them (run an eager check,
// change an argument, drop a phase) before Exporter::export_captured traces them.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ingot/models/model.h"
#include "ingot/nn/cache.h"

namespace ingot::exporters {

// How a decoder's generation components hold the KV cache.
enum class CacheLayout {
  // A StaticCache of max_cache_len slots, its tensors (key_cache.N, value_cache.N,
  // cache_position) mutated in place (ONNX: input.<name> / output.<name> pairs).
  kStatic,
  // A growing cache, nothing in place (ONNX Runtime GenAI's layout with
  // past_present_share_buffer false): one multi-token "decode" over (input_ids [batch,
  // tokens], attention_mask [batch, past + tokens] int64 0/1, position_ids [batch, tokens],
  // past_key_values.N.key / .value [batch, kv_heads, past, head_dim]) -> logits and
  // present.N.key / .value [batch, kv_heads, past + tokens, head_dim] (past_present_names.h).
  // past may be 0 (the prompt); max_cache_len bounds past + tokens. Decoders only.
  kPastPresent,
};

// What export_for_generation makes (seed 003's generation_config + multi_token_decode).
struct GenerationExportOptions {
  int64_t max_cache_len = 256;  // the StaticCache's slots
  int64_t batch = 1;            // the StaticCache's batch (max_batch_size)
  // true:  {"decode"}, one graph whose token count is symbolic in [1, max_cache_len]: it
  //        serves the prompt (empty cache: prefill), single tokens and blocks;
  // false: {"prefill" (token count symbolic), "decode" (exactly one token)}.
  bool multi_token_decode = true;
  // The cache length is a symbol too (Dim "cache_len" >= 2), chosen when the program is
  // loaded (runtime::Generator's max_cache_len); otherwise it is max_cache_len.
  bool dynamic_cache_len = false;
  // The decode inputs. false: [input_ids, cache...], the mask and positions derived
  // from the cache. true: seed 003's C++ layout [input_ids, attention_mask, position_ids,
  // cache...]: attention_mask [batch, 1, tokens, cache_len] bool (True = attend; used as
  // is by every layer, so a sliding window is the caller's to apply) and position_ids
  // [batch, tokens] int64 (the rotary / learned positions) are inputs the graph uses; the
  // cache still tracks where the new tokens are written. Unset: the backend's default
  // (Exporter::generation_takes_mask_and_positions: ExecuTorch true, others false).
  std::optional<bool> mask_and_position_inputs;
  // Static in-place cache (default) or the growing past/present layout; kPastPresent
  // implies one multi-token decode and ignores mask_and_position_inputs (it always takes
  // the mask and positions) and dynamic_cache_len (the past length is always a symbol).
  CacheLayout cache_layout = CacheLayout::kStatic;
  // The model's folder, when it has one: an encoder-decoder's decoder prompt comes from
  // its generation_config.json there (as transformers' generate); empty: the model's
  // decoder_start_token_id alone.
  std::string model_folder;
};

// One forward call made by generate(), as export traces it: the arguments it received
// and a snapshot of the cache before the call.
struct CapturedCall {
  Tensor input_ids;        // [batch, tokens]
  Tensor attention_mask;   // [batch, key slots] as generate passed it
  Tensor position_ids;     // [batch, tokens]
  nn::NamedTensors cache;  // cloned before the call
};

// Runs generate() for `new_tokens` (>= 2) tokens of `prompt_ids` ([batch, n]) with a
// StaticCache of options.max_cache_len slots and returns {"prefill": the prompt call,
// "decode": the first single-token call}. NotSupportedError for a model without a KV
// cache (an encoder).
std::map<std::string, CapturedCall> decompose_for_generation(models::PretrainedModel& model,
                                                             const Tensor& prompt_ids,
                                                             const GenerationExportOptions& options,
                                                             int64_t new_tokens = 3);

// A short example prompt, ids 1..4 in each of `batch` rows: [batch, 4] (a real length,
// never the specialised 0 or 1).
Tensor example_generation_prompt(int64_t batch);

// The example arguments of the mask-and-positions layout for `call`: its positions and
// the causal mask [batch, 1, tokens, cache slots] over them (slot j visible to the
// query at position p when j <= p and generate's 2-D mask keeps j).
Tensor example_causal_mask(const CapturedCall& call);

// The components take (input_ids, StaticCache): the mask and positions generate()
// passed must be the ones the cache derives itself (an unpadded prompt). Otherwise
// NotSupportedError naming `phase`.
void check_cache_derives_mask_and_positions(const CapturedCall& call, const std::string& phase);

}  // namespace ingot::exporters
