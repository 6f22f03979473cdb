// Mapping generation_config.json fields onto GenerationConfig / SamplingParams.
#include "ingot/generation/model_defaults.h"

#include <algorithm>

namespace ingot::generation {

SamplingParams sampling_with_model_defaults(const models::GenerationConfig& model,
                                            SamplingParams base) {
  base.temperature = model.temperature.value_or(base.temperature);
  base.top_k = model.top_k.value_or(base.top_k);
  base.top_p = model.top_p.value_or(base.top_p);
  base.min_p = model.min_p.value_or(base.min_p);
  base.repetition_penalty = model.repetition_penalty.value_or(base.repetition_penalty);
  return base;
}

GenerationConfig with_model_defaults(const models::GenerationConfig& model, int64_t prompt_tokens,
                                     GenerationConfig base) {
  if (model.eos_token_ids) base.stop_token_ids = *model.eos_token_ids;
  if (model.pad_token_id) base.pad_token_id = *model.pad_token_id;
  base.do_sample = model.do_sample.value_or(base.do_sample);
  const SamplingParams s = sampling_with_model_defaults(
      model, {base.temperature, base.top_k, base.top_p, base.min_p, base.repetition_penalty});
  base.temperature = s.temperature;
  base.top_k = s.top_k;
  base.top_p = s.top_p;
  base.min_p = s.min_p;
  base.repetition_penalty = s.repetition_penalty;
  if (auto limit = model.new_token_limit(prompt_tokens)) {
    base.max_new_tokens = std::max<int64_t>(*limit, 1);
  }
  return base;
}

}  // namespace ingot::generation
