// LlamaForCausalLM: config.json -> DecoderConfig. `attention_bias` adds biases to all four
// attention projections; `mlp_bias` to the MLP.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kLlama("LlamaForCausalLM", [](const ConfigReader& c,
                                                          const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  d.mlp_bias = c.get_bool("mlp_bias", false);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
