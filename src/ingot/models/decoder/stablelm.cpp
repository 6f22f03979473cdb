// StableLmForCausalLM: LayerNorm (with bias) instead of RMSNorm, partial rotary,
// optional qkv bias, optional per-head q/k LayerNorm (qk_layernorm) and optional
// parallel residual (attention and MLP both read input_layernorm's output).
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kStableLm("StableLmForCausalLM",
                                      [](const ConfigReader& c, const LoadOptions& o) {
                                        DecoderConfig d = DecoderConfig::from_llama_like(c);
                                        d.norm = NormKind::kLayerNorm;
                                        d.rms_norm_eps = c.get_double("layer_norm_eps", 1e-5);
                                        d.attention_bias = c.get_bool("use_qkv_bias", false);
                                        if (c.get_bool("qk_layernorm", false))
                                          d.qk_norm = nn::QkNorm::kPerHeadLayerNorm;
                                        if (c.get_bool("use_parallel_residual", false))
                                          d.block = BlockKind::kParallel;
                                        return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                      });

}  // namespace
}  // namespace ingot::models
