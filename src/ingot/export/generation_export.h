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

std::map<std::string, ExportedProgram> export_for_generation(models::PretrainedModel& model,
                                                             const GenerationExportOptions& options = {});

// Writes the components as DIR/<name>.ingot and DIR/manifest.json (architecture,
// components, max_cache_len, tokenizer files copied from `model_folder` when present).
void save_generation_components(const std::map<std::string, ExportedProgram>& components,
                                const std::string& dir, const std::string& model_folder,
                                const std::string& architecture, const GenerationExportOptions& options);

}  // namespace ingot
