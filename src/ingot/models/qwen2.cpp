// Qwen2ForCausalLM: biases on q/k/v (not o_proj); a sliding window only when
// `use_sliding_window` is set (then applied to layers >= max_window_layers, which
// ingot does not support yet: such configs are rejected rather than run wrongly).
#include "ingot/models/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kQwen2("Qwen2ForCausalLM", [](const ConfigReader& c, const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.attention_bias = true;
  INGOT_CHECK(!c.get_bool("use_sliding_window", false), NotSupportedError,
              "[Qwen2ForCausalLM] '{}': use_sliding_window=true (per-layer windows) is not "
              "supported yet", c.origin());
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
