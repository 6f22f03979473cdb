// Neural-network functions: normalisation and attention.
#pragma once

#include <source_location>
#include <optional>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// aten::layer_norm: normalises over the trailing dims `normalized_shape`, then applies
// weight and bias (each of shape normalized_shape). Statistics and the affine transform
// are computed in float (double for float64 input); the result has the input's dtype.
Tensor layer_norm(const Tensor& input, const SymIntList& normalized_shape,
                  const std::optional<Tensor>& weight = {}, const std::optional<Tensor>& bias = {},
                  double eps = 1e-5,
    std::source_location where = std::source_location::current());

// aten::rms_norm (PyTorch >= 2.6 semantics):
//   out = T( float(x) * rsqrt(mean(float(x)^2) + eps) * weight )
// with a single rounding to the input dtype T at the end; the result has the input's
// dtype. eps None means std::numeric_limits<opmath>::epsilon(), as ATen does (float's
// epsilon for f16/bf16/f32 input, double's for f64).
Tensor rms_norm(const Tensor& input, const SymIntList& normalized_shape,
                const std::optional<Tensor>& weight = {}, std::optional<double> eps = std::nullopt,
    std::source_location where = std::source_location::current());

// Hugging Face's RMSNorm order (LlamaRMSNorm, Qwen2/3RMSNorm, ...):
//   y = T( float(x) * rsqrt(mean(float(x)^2) + eps) )   ; cast to the input dtype first
//   out = weight * y                                     ; mul.Tensor, promoted dtype
// Built from rms_norm without weight followed by mul, so it is bit-identical to
// `self.weight * hidden_states.to(input_dtype)` and traces to two ATen ops.
Tensor rms_norm_hf(const Tensor& input, const Tensor& weight, double eps,
    std::source_location where = std::source_location::current());

// aten::scaled_dot_product_attention (inference: dropout_p is always 0).
//   query [..., Hq, Lq, E], key [..., Hkv, S, E], value [..., Hkv, S, Ev]
//   -> [..., Hq, Lq, Ev] in query's dtype.
// mask: bool (true = attend) or additive float, broadcastable to [..., Hq, Lq, S].
// is_causal: top-left aligned lower triangle (key j visible to query i iff j <= i);
// not combinable with a mask. scale defaults to 1/sqrt(E). enable_gqa lets Hq be a
// multiple of Hkv (query head h reads kv head h / (Hq / Hkv)). A query row whose every
// key is masked gives zeros, as PyTorch >= 2.5 (_safe_softmax) does.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& mask = {}, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false,
    std::source_location where = std::source_location::current());

// Mixture-of-experts experts (Mixtral, Qwen3-MoE): for each token t of hidden [T, H],
//   out[t] = sum_j expert_weight[t, j] * down[e](act(gate[e] x) * up[e] x),  e = expert_index[t, j]
// expert_index int64 [T, k], expert_weight [T, k] (hidden's dtype); per expert gate[e],
// up[e] [I, H] and down[e] [H, I]; act "silu" or "gelu_tanh". Only the chosen experts
// are computed (the CPU kernel groups tokens by expert); shapes do not depend on the
// routing. -> [T, H]
Tensor moe_experts(const Tensor& hidden, const Tensor& expert_index, const Tensor& expert_weight,
                   const std::vector<Tensor>& gate, const std::vector<Tensor>& up,
                   const std::vector<Tensor>& down, const std::string& act = "silu",
    std::source_location where = std::source_location::current());

}  // namespace ingot
