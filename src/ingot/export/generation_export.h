// Exporting decoder LMs for generation (seed 003: prefill / decode components, the merged
// multi-token decode graph, the static KV cache updated in place).
//
// Each component is the decoder's forward over (input_ids [batch, tokens], StaticCache)
// -> logits [batch, tokens, vocab]. The cache is a pytree input whose writes are
// USER_INPUT_MUTATION outputs, which the runtime performs in place.
//   multi_token_decode = true:  {"decode"} with `tokens` symbolic in [1, max_cache_len]:
//                               one graph for the prompt, single tokens and blocks;
//   multi_token_decode = false: {"prefill" (tokens symbolic), "decode" (tokens = 1)}.
// With `dynamic_cache_len` the cache length is a symbol too (chosen when the program is
// loaded); otherwise it is max_cache_len.
#pragma once

#include <map>
#include <string>

#include "ingot/export/program.h"
#include "ingot/models/model.h"

namespace ingot {

struct GenerationExportOptions {
  int64_t max_cache_len = 256;
  bool multi_token_decode = true;
  bool dynamic_cache_len = false;
  int64_t batch = 1;  // the cache's batch (max_batch_size)
};

// One forward call made by generate(), as export will trace it: the arguments it
// received and a snapshot of the cache before the call.
struct CapturedCall {
  Tensor input_ids;       // [batch, tokens]
  Tensor attention_mask;  // [batch, key slots] as generate passed it
  Tensor position_ids;    // [batch, tokens]
  nn::NamedTensors cache; // cloned before the call
};

// decompose_for_generation: runs generate() for `new_tokens` (2-3) tokens of `prompt_ids`
// ([batch, n]) with a StaticCache of max_cache_len slots and a hook around forward that
// records each call: {"prefill": the prompt call, "decode": the first single-token call}.
// Callers may inspect or change the captured arguments before export_captured().
std::map<std::string, CapturedCall> decompose_for_generation(models::PretrainedModel& model,
                                                             const Tensor& prompt_ids,
                                                             const GenerationExportOptions& options,
                                                             int64_t new_tokens = 3);

// Exports the captured phases: "decode" only (its token count symbolic, traced on the
// prefill call, so one graph serves both) with multi_token_decode, else "prefill" and
// "decode". The components take (input_ids, StaticCache): the attention mask and
// positions generate() passed must be the ones the cache derives itself (an unpadded
// prompt); otherwise NotSupportedError.
std::map<std::string, ExportedProgram> export_captured(models::PretrainedModel& model,
                                                       const std::map<std::string, CapturedCall>& calls,
                                                       const GenerationExportOptions& options);

// A short example prompt, ids 1..4 in each of `batch` rows: [batch, 4] (a real length,
// never the specialised 0 or 1).
Tensor example_generation_prompt(int64_t batch);

// decompose_for_generation on example_generation_prompt(options.batch), then
// export_captured.
std::map<std::string, ExportedProgram> export_for_generation(models::PretrainedModel& model,
                                                             const GenerationExportOptions& options = {});

// Writes the components as DIR/<name>.ingot and DIR/manifest.json (architecture,
// components, max_cache_len, tokenizer files copied from `model_folder` when present).
void save_generation_components(const std::map<std::string, ExportedProgram>& components,
                                const std::string& dir, const std::string& model_folder,
                                const std::string& architecture, const GenerationExportOptions& options);

}  // namespace ingot
