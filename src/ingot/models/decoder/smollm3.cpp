// SmolLM3ForCausalLM: Llama with NoPE layers — `no_rope_layers[i]` 0 marks a layer
// without rotary (default: every no_rope_layer_interval-th layer) — and the Qwen-style
// optional sliding windows.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

const ArchitectureRegistrar kSmolLM3("SmolLM3ForCausalLM", [](const ConfigReader& c,
                                                              const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  d.mlp_bias = c.get_bool("mlp_bias", false);
  d.tie_word_embeddings = c.get_bool("tie_word_embeddings", true);
  std::vector<int64_t> use_rope = c.get_int_list("no_rope_layers");
  if (use_rope.empty()) {
    const int64_t interval = c.get_int("no_rope_layer_interval", 4);
    for (int64_t i = 0; i < d.num_layers; ++i) use_rope.push_back((i + 1) % interval != 0);
  }
  INGOT_CHECK(int64_t(use_rope.size()) == d.num_layers, IoError,
              "[config] '{}': no_rope_layers has {} entries for {} layers", c.origin(),
              use_rope.size(), d.num_layers);
  for (int64_t flag : use_rope) d.rope_layers.push_back(flag != 0);
  d.read_optional_sliding_windows(c);
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
