// Qwen2ForCausalLM: biases on q/k/v (not o_proj); with `use_sliding_window`, a sliding
// window on the layers `layer_types` marks (or those >= max_window_layers).
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kQwen2("Qwen2ForCausalLM",
                                   [](const ConfigReader& c, const LoadOptions& o) {
                                     DecoderConfig d = DecoderConfig::from_llama_like(c);
                                     d.attention_bias = true;
                                     d.read_optional_sliding_windows(c);
                                     return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                   });

}  // namespace
}  // namespace ingot::models
