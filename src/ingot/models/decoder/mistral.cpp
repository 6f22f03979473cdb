// MistralForCausalLM: a Llama-shaped decoder with an optional sliding attention window
// (`sliding_window`: each query sees at most that many most recent keys).
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kMistral("MistralForCausalLM",
                                     [](const ConfigReader& c, const LoadOptions& o) {
                                       DecoderConfig d = DecoderConfig::from_llama_like(c);
                                       d.sliding_window = c.get_optional_int("sliding_window");
                                       return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                     });

}  // namespace
}  // namespace ingot::models
