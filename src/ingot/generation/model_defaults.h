// A model's default generation settings (models::GenerationConfig, read from its
// generation_config.json / config.json) applied to ingot's generation settings: what the
// files set replaces the given value, what they leave unset keeps it. Callers apply their
// own overrides (command-line flags) afterwards: transformers ranks the settings
// user > model files > library defaults, which these functions keep.
#pragma once

#include "ingot/generation/generate.h"
#include "ingot/generation/sampling.h"
#include "ingot/models/generation_config.h"

namespace ingot::generation {

// The eager generate()'s settings after a prompt of `prompt_tokens`: stop_token_ids from
// eos_token_id, pad_token_id, do_sample, the sampling parameters, and max_new_tokens
// from max_new_tokens or max_length (models::GenerationConfig::new_token_limit; at least
// 1, as transformers always generates one token).
GenerationConfig with_model_defaults(const models::GenerationConfig& model, int64_t prompt_tokens,
                                     GenerationConfig base = {});

// The sampling parameters alone (temperature, top_k, top_p, min_p, repetition_penalty),
// e.g. for runtime::Generator's options.
SamplingParams sampling_with_model_defaults(const models::GenerationConfig& model,
                                            SamplingParams base = {});

}  // namespace ingot::generation
