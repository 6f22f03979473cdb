// GraniteForCausalLM: Llama with four multipliers — embeddings x embedding_multiplier,
// attention scores x attention_multiplier (instead of 1/sqrt(head_dim)), each sub-layer
// output x residual_multiplier before its residual add, logits / logits_scaling.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kGranite("GraniteForCausalLM", [](const ConfigReader& c,
                                                              const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  d.mlp_bias = c.get_bool("mlp_bias", false);
  d.embedding_scale = c.get_double("embedding_multiplier", 1.0);
  d.attention_scale = c.get_double("attention_multiplier", 1.0);
  d.residual_scale = c.get_double("residual_multiplier", 1.0);
  d.logits_divisor = c.get_double("logits_scaling", 1.0);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
