// Basic layers with Hugging Face parameter names: Linear, Embedding, LayerNorm, RMSNorm.
//
// Parameters are created as placeholders: dtype and shape, no data (like PyTorch's meta
// device), so building a large model allocates nothing; values come from
// load_state_dict (checkpoints, usually zero-copy views of mapped files) or the caller.
#pragma once

#include "ingot/nn/module.h"

namespace ingot::nn {

// A parameter without data: shape and dtype only, until loaded.
Tensor placeholder(const IntShape& sizes, DType dtype);

// y = x W^T + b; weight [out, in], bias [out].
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;  // [..., in] -> [..., out]
  Tensor& weight() const { return *weight_; }
  bool has_bias() const { return bias_ != nullptr; }
  Tensor& bias() const { return *bias_; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_, out_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
};

// Row lookup: ids [...] -> [..., dim]; weight [num, dim].
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, DType dtype = DType::F32);
  Tensor forward(const Tensor& ids) const;
  Tensor& weight() const { return *weight_; }

 private:
  Tensor* weight_;
};

// A normalisation over the last dim; decoder blocks pick the kind from the config.
class Normalization : public Module {
 public:
  using Module::Module;
  virtual Tensor forward(const Tensor& x) const = 0;
};

// torch.nn.LayerNorm over the last dim (elementwise affine, optional bias).
class LayerNorm : public Normalization {
 public:
  LayerNorm(int64_t dim, double eps, bool bias = true, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const override;
  Tensor& weight() const { return *weight_; }

 private:
  int64_t dim_;
  double eps_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
};

// Hugging Face RMSNorm over the last dim: normalise in float32, cast back to the input
// dtype, then scale by `weight` (or by `1 + weight` with weight_offset, as Gemma does).
class RMSNorm : public Normalization {
 public:
  RMSNorm(int64_t dim, double eps, DType dtype = DType::F32, bool weight_offset = false);
  Tensor forward(const Tensor& x) const override;

 private:
  double eps_;
  bool weight_offset_;
  Tensor* weight_;
};

}  // namespace ingot::nn
