// Qwen3ForCausalLM: per-head RMSNorm on q and k (before rotary), explicit head_dim,
// optional attention_bias; sliding windows only with `use_sliding_window` (rejected).
#include "ingot/models/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kQwen3("Qwen3ForCausalLM", [](const ConfigReader& c, const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.qk_norm = true;
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  INGOT_CHECK(!c.get_bool("use_sliding_window", false), NotSupportedError,
              "[Qwen3ForCausalLM] '{}': use_sliding_window=true (per-layer windows) is not "
              "supported yet", c.origin());
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
