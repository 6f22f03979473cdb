// Sparse mixture-of-experts feed-forward (Mixtral, Qwen3-MoE) with Hugging Face names:
//   gate (the router, Linear hidden -> experts), experts.E.{gate, up, down} (each expert
//   a GatedMLP; Mixtral names its projections w1 / w3 / w2).
// Routing as transformers: softmax of the router logits in float32, top-k, the k
// weights renormalised to sum 1 when norm_topk_prob, then cast to the activations'
// dtype. The experts run as one moe_experts op, which computes only the chosen ones.
#pragma once

#include <array>

#include "ingot/nn/attention.h"

namespace ingot::nn {

struct MoeConfig {
  int64_t num_experts = 0;
  int64_t top_k = 0;
  int64_t intermediate_size = 0;  // each expert's
  bool norm_topk_prob = true;
  std::string hidden_act = "silu";
  std::array<const char*, 3> expert_names{"gate_proj", "up_proj", "down_proj"};
};

class SparseMoE : public FeedForward {
 public:
  SparseMoE(int64_t hidden, const MoeConfig& config, DType dtype);
  Tensor forward(const Tensor& x) const override;  // [b, s, hidden] -> [b, s, hidden]

 private:
  int64_t hidden_;
  MoeConfig config_;
  std::string op_act_;  // moe_experts' name for the activation
  std::shared_ptr<Linear> gate_;
  std::shared_ptr<ModuleList> experts_;
};

// moe_experts written with core ops, computing every expert densely and weighting each
// by the router weight it got (zero when not chosen): the fallback for backends without
// a moe_experts lowering (exporters/moe_fallback.h). Same arguments and result.
Tensor moe_experts_dense(const Tensor& hidden, const Tensor& expert_index,
                         const Tensor& expert_weight, const std::vector<Tensor>& gate,
                         const std::vector<Tensor>& up, const std::vector<Tensor>& down,
                         const std::string& act);

}  // namespace ingot::nn
