#include "ingot/nn/layers.h"

#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"

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
  if (is_packed())
    return quantized_linear(x, *qweight_, *scales_, Tensor(), bias_ ? *bias_ : Tensor(), bits_,
                            group_);
  return linear(x, *weight_, bias_ ? *bias_ : Tensor());
}

Tensor& Linear::weight() const {
  INGOT_CHECK(!is_packed(), NotSupportedError,
              "[Linear] the {} -> {} layer holds packed int{} weights (qweight, scales; group "
              "{}), not a float weight: call forward(), or load it unpacked",
              in_, out_, bits_, group_);
  return *weight_;
}

void Linear::use_packed_weight(int bits, int64_t group) {
  INGOT_CHECK(!is_packed(), ValueError, "[Linear] the {} -> {} layer is already packed", in_, out_);
  INGOT_CHECK(
      (bits == 8 || bits == 4) && group > 0 && in_ % group == 0 && (bits == 8 || group % 32 == 0),
      ValueError,
      "[Linear] cannot pack the {} -> {} layer as int{} with group {} (bits 8 or 4; the "
      "group must divide in_features, and be a multiple of 32 for bits 4)",
      in_, out_, bits, group);
  remove_slot("weight");
  weight_ = nullptr;
  qweight_ = register_parameter("qweight", placeholder({out_, in_ * bits / 8}, DType::U8));
  scales_ = register_parameter("scales", placeholder({out_, in_ / group}, DType::F32));
  bits_ = bits;
  group_ = group;
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, DType dtype)
    : Module("Embedding"), num_(num_embeddings), dim_(dim), dtype_(dtype) {
  weight_ = register_parameter("weight", placeholder({num_embeddings, dim}, dtype));
}

Tensor Embedding::forward(const Tensor& ids) const {
  if (!is_packed()) return embedding(*weight_, ids);
  Tensor rows = quantized_embedding(*qweight_, *scales_, ids);  // f32 [..., dim]
  return dtype_ == DType::F32 ? rows : to(rows, dtype_);
}

Tensor& Embedding::weight() const {
  INGOT_CHECK(!is_packed(), NotSupportedError,
              "[Embedding] the {} x {} table holds packed int8 rows (qweight, scales; group "
              "{}), not a float weight: call forward(), or load it unpacked",
              num_, dim_, group_);
  return *weight_;
}

void Embedding::use_packed_weight(int64_t group) {
  INGOT_CHECK(!is_packed(), ValueError, "[Embedding] the {} x {} table is already packed", num_,
              dim_);
  INGOT_CHECK(group > 0 && dim_ % group == 0, ValueError,
              "[Embedding] cannot pack the {} x {} table in groups of {} (the group must divide "
              "the row)",
              num_, dim_, group);
  remove_slot("weight");
  weight_ = nullptr;
  qweight_ = register_parameter("qweight", placeholder({num_, dim_}, DType::U8));
  scales_ = register_parameter("scales", placeholder({num_, dim_ / group}, DType::F32));
  group_ = group;
}

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
