// Qwen3ForCausalLM: per-head RMSNorm on q and k (before rotary), explicit head_dim,
// optional attention_bias; per-layer sliding windows as Qwen2.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kQwen3("Qwen3ForCausalLM", [](const ConfigReader& c,
                                                          const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.qk_norm = nn::QkNorm::kPerHead;
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  d.read_optional_sliding_windows(c);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
