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

Tensor moe_experts_dense(const Tensor& hidden, const Tensor& expert_index,
                         const Tensor& expert_weight, const std::vector<Tensor>& gate,
                         const std::vector<Tensor>& up, const std::vector<Tensor>& down,
                         const std::string& act) {
  INGOT_CHECK(act == "silu" || act == "gelu_tanh", NotSupportedError,
              "[moe_experts_dense] activation '{}' is not supported (silu, gelu_tanh)", act);
  Tensor x = to(hidden, DType::F32);          // [T, H], float32 like the kernel
  Tensor w = to(expert_weight, DType::F32);   // [T, k]
  Tensor out;
  for (size_t e = 0; e < gate.size(); ++e) {
    Tensor g = linear(x, to(gate[e], DType::F32)), u = linear(x, to(up[e], DType::F32));
    Tensor a = act == "silu" ? silu(g) : gelu(g, "tanh");
    Tensor y = linear(mul(a, u), to(down[e], DType::F32));                 // [T, H]
    // The weight expert e got per token: the sum over the k slots that chose it.
    Tensor chosen = eq(expert_index, int64_t(e));                           // [T, k]
    Tensor r = sum(masked_fill(w, logical_not(chosen), 0.0), {-1}, true);  // [T, 1]
    Tensor contribution = mul(y, r);
    out = out.defined() ? add(out, contribution) : contribution;
  }
  return to(out, hidden.dtype());
}

}  // namespace ingot::nn
