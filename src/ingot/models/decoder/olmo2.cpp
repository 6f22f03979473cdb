// Olmo2ForCausalLM: norms after attention and after the MLP instead of before them
// (post-norm blocks), and RMSNorm on q and k over all heads' channels before rotary.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kOlmo2("Olmo2ForCausalLM", [](const ConfigReader& c,
                                                          const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.block = BlockKind::kPostNorm;
  d.qk_norm = nn::QkNorm::kFull;
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
