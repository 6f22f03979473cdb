// torchtune-style rotary position embeddings (torchtune.modules.RotaryPositionalEmbeddings
// and torchtune.models.llama3_1.Llama3ScaledRoPE), the pos_embeddings of the torchtune
// attention modules in this folder.
//
// Unlike Hugging Face's rotate_half form (nn/rotary.h), torchtune rotates adjacent pairs
// (x[2i], x[2i+1]) by the angle pos * theta_i, and applies the embedding to tensors in
// the projection layout [b, s, n_h, h_d]. The cos/sin table is a non-persistent buffer
// "cache" [max_seq_len, dim / 2, 2] (cos, sin), computed in float32 at construction.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::tune {

// What the attention modules call: x [b, s, n_h, h_d] -> same shape and dtype, rotated by
// the positions input_pos (int64 [b, s]), or 0..s-1 when input_pos is undefined.
class PositionalEmbedding : public nn::Module {
 public:
  using nn::Module::Module;
  virtual Tensor forward(const Tensor& x, const Tensor& input_pos = Tensor()) const = 0;
};

class RotaryPositionalEmbeddings : public PositionalEmbedding {
 public:
  // theta_i = 1 / base^(2i / dim), i < dim / 2.
  RotaryPositionalEmbeddings(int64_t dim, int64_t max_seq_len = 4096, double base = 10000);
  Tensor forward(const Tensor& x, const Tensor& input_pos = Tensor()) const override;

  int64_t dim() const { return dim_; }
  int64_t max_seq_len() const { return max_seq_len_; }
  const Tensor& cache() const { return *cache_; }

 protected:
  // theta: float32 [dim / 2], the frequencies of the pairs.
  RotaryPositionalEmbeddings(std::string type_name, int64_t dim, int64_t max_seq_len,
                             const Tensor& theta);

 private:
  int64_t dim_, max_seq_len_;
  Tensor* cache_;
};

// Llama 3.1 frequency scaling: wavelengths longer than old_context_len / low_freq_factor
// are divided by scale_factor, shorter than old_context_len / high_freq_factor kept, and
// the band between smoothly interpolated (the same rule as nn/rotary.h's "llama3").
struct Llama3Scaling {
  double scale_factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t old_context_len = 8192;
};

class Llama3ScaledRoPE : public RotaryPositionalEmbeddings {
 public:
  Llama3ScaledRoPE(int64_t dim, int64_t max_seq_len = 8192, double base = 500000,
                   Llama3Scaling scaling = {});
};

}  // namespace ingot::tune
