#include "ingot/nn/layers.h"

#include "ingot/ops/functional.h"

namespace ingot::nn {

Tensor placeholder(const IntShape& sizes, DType dtype) {
  return Tensor::meta(dtype, to_sym_shape(sizes));
}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype)
    : Module("Linear"), in_(in_features), out_(out_features) {
  weight_ = register_parameter("weight", placeholder({out_features, in_features}, dtype));
  if (bias) bias_ = register_parameter("bias", placeholder({out_features}, dtype));
}

Tensor Linear::forward(const Tensor& x) const {
  return linear(x, *weight_, bias_ ? *bias_ : Tensor());
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, DType dtype) : Module("Embedding") {
  weight_ = register_parameter("weight", placeholder({num_embeddings, dim}, dtype));
}

Tensor Embedding::forward(const Tensor& ids) const { return embedding(*weight_, ids); }

LayerNorm::LayerNorm(int64_t dim, double eps, bool bias, DType dtype)
    : Normalization("LayerNorm"), dim_(dim), eps_(eps) {
  weight_ = register_parameter("weight", placeholder({dim}, dtype));
  if (bias) bias_ = register_parameter("bias", placeholder({dim}, dtype));
}

Tensor LayerNorm::forward(const Tensor& x) const {
  std::optional<Tensor> bias;
  if (bias_) bias = *bias_;
  return layer_norm(x, {SymInt(dim_)}, *weight_, bias, eps_);
}

RMSNorm::RMSNorm(int64_t dim, double eps, DType dtype, bool weight_offset)
    : Normalization("RMSNorm"), eps_(eps), weight_offset_(weight_offset) {
  weight_ = register_parameter("weight", placeholder({dim}, dtype));
}

Tensor RMSNorm::forward(const Tensor& x) const {
  if (!weight_offset_) return rms_norm_hf(x, *weight_, eps_);
  // Gemma: x_normed * (1 + w), computed in float32 then cast.
  Tensor xf = to(x, DType::F32);
  Tensor normed = mul(xf, rsqrt(add(mean(mul(xf, xf), {-1}, true), eps_)));
  return to(mul(normed, add(to(*weight_, DType::F32), 1.0)), x.dtype());
}

}  // namespace ingot::nn
