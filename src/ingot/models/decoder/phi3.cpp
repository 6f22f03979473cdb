// Phi3ForCausalLM: a Llama-shaped decoder with fused projections (qkv_proj = [q | k | v],
// gate_up_proj = [gate | up]), optional sliding window and partial rotary, and
// LongRoPE ("longrope" / "su": short and long per-frequency factors, chosen per forward
// by whether the positions pass original_max_position_embeddings).
//
// Not reproduced: transformers' generate drops the cache and re-runs the whole sequence
// when it grows past original_max_position_embeddings (so earlier keys are re-rotated
// with the long factors); ingot keeps the cached keys (docs/models.md).
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kPhi3("Phi3ForCausalLM",
                                  [](const ConfigReader& c, const LoadOptions& o) {
                                    DecoderConfig d = DecoderConfig::from_llama_like(c);
                                    d.fused_qkv = d.fused_gate_up = true;
                                    d.sliding_window = c.get_optional_int("sliding_window");
                                    return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                  });

}  // namespace
}  // namespace ingot::models
