#include "ingot/nn/moe.h"

#include "ingot/ops/functional.h"

namespace ingot::nn {

SparseMoE::SparseMoE(int64_t hidden, const MoeConfig& c, DType dtype)
    : FeedForward("SparseMoE"), hidden_(hidden), config_(c) {
  INGOT_CHECK(c.num_experts > 0 && c.top_k > 0 && c.top_k <= c.num_experts, ValueError,
              "[SparseMoE] num_experts_per_tok {} must be in [1, num_experts {}]", c.top_k,
              c.num_experts);
  if (c.hidden_act == "silu" || c.hidden_act == "swish") {
    op_act_ = "silu";
  } else if (c.hidden_act == "gelu_pytorch_tanh" || c.hidden_act == "gelu_new" ||
             c.hidden_act == "gelu_fast") {
    op_act_ = "gelu_tanh";
  } else {
    INGOT_THROW(NotSupportedError, "[SparseMoE] expert activation '{}' is not supported (silu, "
                "gelu_pytorch_tanh)", c.hidden_act);
  }
  gate_ = register_module("gate", std::make_shared<Linear>(hidden, c.num_experts, false, dtype));
  experts_ = register_module("experts", std::make_shared<ModuleList>());
  for (int64_t e = 0; e < c.num_experts; ++e) {
    experts_->append(std::make_shared<GatedMLP>(hidden, c.intermediate_size, c.hidden_act, false,
                                                dtype, false, c.expert_names));
  }
}

Tensor SparseMoE::forward(const Tensor& x) const {
  const SymInt b = x.sym_size(0), s = x.sym_size(1);
  Tensor tokens = reshape(x, {b * s, SymInt(hidden_)});                    // [T, H]
  Tensor probs = softmax(to(gate_->forward(tokens), DType::F32), -1);     // [T, E]
  auto [weight, index] = topk(probs, config_.top_k, -1);                  // [T, k]
  if (config_.norm_topk_prob) weight = div(weight, sum(weight, {-1}, true));
  weight = to(weight, x.dtype());
  std::vector<Tensor> gate, up, down;
  for (size_t e = 0; e < experts_->size(); ++e) {
    const auto& expert = experts_->at<GatedMLP>(e);
    gate.push_back(expert.gate_proj().weight());
    up.push_back(expert.up_proj().weight());
    down.push_back(expert.down_proj().weight());
  }
  Tensor out = moe_experts(tokens, index, weight, gate, up, down, op_act_);  // [T, H]
  return reshape(out, {b, s, SymInt(hidden_)});
}

}  // namespace ingot::nn
