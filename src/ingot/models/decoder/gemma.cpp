// Gemma 1, 2 and 3 (text). All three scale the embeddings by sqrt(hidden_size), use
// RMSNorm(1 + weight), a gelu-tanh gated MLP, an explicit head_dim and a tied LM head.
//  * Gemma 2 adds norms after attention and around the MLP (sandwich blocks), the
//    attention scale query_pre_attn_scalar^-0.5, alternating sliding-window layers
//    (layer_types), and tanh soft-capping of the attention scores and final logits.
//  * Gemma 3 drops the attention soft-capping (transformers ignores the key), adds
//    per-head q/k norms and a separate rotary base for sliding layers.
#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

DecoderConfig gemma_common(const ConfigReader& c) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.norm = NormKind::kRmsOffset;
  d.tie_word_embeddings = c.get_bool("tie_word_embeddings", true);
  d.embedding_scale = std::sqrt(double(d.hidden_size));
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  INGOT_CHECK(!c.get_bool("use_bidirectional_attention", false), NotSupportedError,
              "[{}] '{}': use_bidirectional_attention=true is not supported (ingot's decoders "
              "are causal)",
              c.architecture(), c.origin());
  // Gemma 1 names the activation hidden_act ("gelu" in old configs means the tanh
  // approximation, as transformers reads it); Gemma 2/3 hidden_activation.
  d.hidden_act = c.get_string("hidden_activation", c.get_string("hidden_act", "gelu_pytorch_tanh"));
  if (d.hidden_act == "gelu") d.hidden_act = "gelu_pytorch_tanh";
  return d;
}

// Gemma 2 and 3: sandwich norms, query_pre_attn_scalar, sliding layers, final softcap.
DecoderConfig gemma2_like(const ConfigReader& c, int64_t default_pattern) {
  DecoderConfig d = gemma_common(c);
  d.block = BlockKind::kSandwich;
  d.attention_scale = 1.0 / std::sqrt(c.get_double("query_pre_attn_scalar", 256));
  d.sliding_window = c.get_optional_int("sliding_window");
  // Without layer_types: every `pattern`-th layer is full, the others sliding.
  const int64_t pattern = c.get_int("sliding_window_pattern", default_pattern);
  std::vector<bool> fallback;
  for (int64_t i = 0; i < d.num_layers; ++i) fallback.push_back((i + 1) % pattern != 0);
  d.read_layer_types(c, fallback);
  if (c.has("final_logit_softcapping")) d.final_softcap = c.get_double("final_logit_softcapping");
  return d;
}

const ArchitectureRegistrar kGemma("GemmaForCausalLM", [](const ConfigReader& c,
                                                          const LoadOptions& o) {
  return std::make_shared<DecoderLM>(gemma_common(c), o.compute_dtype);
});

const ArchitectureRegistrar kGemma2("Gemma2ForCausalLM",
                                    [](const ConfigReader& c, const LoadOptions& o) {
                                      DecoderConfig d = gemma2_like(c, 2);
                                      if (c.has("attn_logit_softcapping"))
                                        d.attn_softcap = c.get_double("attn_logit_softcapping");
                                      return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                    });

const ArchitectureRegistrar kGemma3("Gemma3ForCausalLM",
                                    [](const ConfigReader& c, const LoadOptions& o) {
                                      DecoderConfig d = gemma2_like(c, 6);
                                      d.qk_norm = nn::QkNorm::kPerHead;
                                      d.rope = c.rope("full_attention");
                                      d.local_rope = c.rope("sliding_attention");
                                      return std::make_shared<DecoderLM>(d, o.compute_dtype);
                                    });

}  // namespace
}  // namespace ingot::models
