// Mixture-of-experts decoders: Llama / Qwen3 blocks whose MLP is a SparseMoE (a router
// choosing num_experts_per_tok of the experts per token; nn/moe.h).
//  * MixtralForCausalLM: Mistral attention (optional sliding window), every layer sparse,
//    router weights always renormalised; names block_sparse_moe.{gate, experts.E.{w1,
//    w3, w2}} (gate, up, down).
//  * Qwen3MoeForCausalLM: Qwen3 attention (q/k norm, optional sliding windows), sparse on
//    layers l with (l + 1) % decoder_sparse_step == 0 outside mlp_only_layers (those keep
//    a dense MLP of intermediate_size), norm_topk_prob; names mlp.{gate,
//    experts.E.{gate,up,down}_proj}.
#include <algorithm>

#include "ingot/models/decoder/decoder_lm.h"

namespace ingot::models {
namespace {

nn::MoeConfig moe_config(const ConfigReader& c, const char* experts_key, int64_t intermediate,
                         bool norm_topk_prob) {
  nn::MoeConfig m;
  // transformers 5 writes num_local_experts for both; older Qwen3-MoE configs num_experts.
  m.num_experts =
      c.has("num_local_experts") ? c.get_int("num_local_experts") : c.get_int(experts_key);
  m.top_k = c.get_int("num_experts_per_tok");
  m.intermediate_size = intermediate;
  m.norm_topk_prob = norm_topk_prob;
  m.hidden_act = c.get_string("hidden_act", "silu");
  return m;
}

const ArchitectureRegistrar kMixtral("MixtralForCausalLM", [](const ConfigReader& c,
                                                              const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.sliding_window = c.get_optional_int("sliding_window");
  d.moe = moe_config(c, "num_local_experts", d.intermediate_size, true);
  d.moe->expert_names = {"w1", "w3", "w2"};
  d.mlp_name = "block_sparse_moe";
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

const ArchitectureRegistrar kQwen3Moe("Qwen3MoeForCausalLM", [](const ConfigReader& c,
                                                                const LoadOptions& o) {
  DecoderConfig d = DecoderConfig::from_llama_like(c);
  d.qk_norm = nn::QkNorm::kPerHead;
  d.attention_bias = d.output_bias = c.get_bool("attention_bias", false);
  d.read_optional_sliding_windows(c);
  d.moe = moe_config(c, "num_experts", c.get_int("moe_intermediate_size"),
                     c.get_bool("norm_topk_prob", false));
  const int64_t step = c.get_int("decoder_sparse_step", 1);
  INGOT_CHECK(step > 0, IoError, "[config] '{}': decoder_sparse_step must be > 0", c.origin());
  const std::vector<int64_t> dense = c.get_int_list("mlp_only_layers");
  for (int64_t l = 0; l < d.num_layers; ++l) {
    const bool listed = std::find(dense.begin(), dense.end(), l) != dense.end();
    d.moe_layers.push_back(!listed && (l + 1) % step == 0);
  }
  return std::make_shared<DecoderLM>(d, o.compute_dtype);
});

}  // namespace
}  // namespace ingot::models
