// Rotary position embeddings as Hugging Face computes them.
//
// inv_freq follows transformers' ROPE_INIT_FUNCTIONS for the supported types (default,
// linear, dynamic NTK, llama3, yarn, longrope) in float32 like torch; cos/sin are computed from
// position ids with ops (traceable) and scaled by the type's attention factor. Partial
// rotary (rotary_dim < head_dim) rotates only the leading rotary_dim channels.
#pragma once

#include <utility>

#include "ingot/nn/module.h"
#include "ingot/nn/rope_config.h"

namespace ingot::nn {

class RotaryEmbedding : public Module {
 public:
  RotaryEmbedding(int64_t head_dim, const RopeConfig& rope, int64_t max_position_embeddings);

  // position_ids [batch, seq] (int64) -> cos, sin [batch, seq, rotary_dim] in `dtype`.
  std::pair<Tensor, Tensor> forward(const Tensor& position_ids, DType dtype) const;
  int64_t rotary_dim() const { return rotary_dim_; }
  double attention_scaling() const { return attention_scaling_; }

 private:
  // inv_freq [rotary_dim / 2] for sequences up to seq_len (only dynamic NTK uses it).
  Tensor compute_inv_freq(int64_t seq_len) const;
  // longrope: 1 / (factor_i * base^(2i / rotary_dim)) for the short or long factors.
  Tensor longrope_inv_freq(const std::vector<double>& factors) const;

  RopeConfig rope_;
  int64_t rotary_dim_;
  int64_t max_position_embeddings_;
  double attention_scaling_ = 1.0;
  Tensor* inv_freq_;  // non-persistent buffer, as in transformers
  Tensor* long_inv_freq_ = nullptr;  // longrope: the long-context frequencies
};

// q, k [batch, heads, seq, head_dim]; cos, sin [batch, seq, rotary_dim].
// Returns (q * cos + rotate_half(q) * sin, same for k) on the rotary channels.
std::pair<Tensor, Tensor> apply_rotary(const Tensor& q, const Tensor& k, const Tensor& cos,
                                       const Tensor& sin);

}  // namespace ingot::nn
