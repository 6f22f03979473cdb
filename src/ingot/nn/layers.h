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
//
// Packed form (use_packed_weight): the float `weight` is replaced by `qweight` uint8 and
// `scales` f32 in the packed layout of ingot::quantized_linear (ops/functional/quantized.h,
// symmetric: fixed zero point 2^(bits-1)), and forward() runs quantized_linear, so a traced
// program holds `ingot::quantized_linear` on those parameters, as a quantised export does.
// What loads weights that are already packed (a GGUF's Q4_0 / Q8_0 blocks) switches the
// layer before loading them.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;  // [..., in] -> [..., out]
  // The float weight; NotSupportedError when the layer is packed.
  Tensor& weight() const;
  bool has_bias() const { return bias_ != nullptr; }
  Tensor& bias() const { return *bias_; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

  // Replaces `weight` by placeholders `qweight` [out, in * bits / 8] uint8 and `scales`
  // [out, in / group] f32 (bits 8 or 4; group divides in, a multiple of 32 for bits 4).
  // ValueError on a layout quantized_linear does not run, or when already packed.
  void use_packed_weight(int bits, int64_t group);
  bool is_packed() const { return bits_ != 0; }
  int packed_bits() const { return bits_; }  // 0: float
  int64_t packed_group() const { return group_; }

 private:
  int64_t in_, out_;
  Tensor* weight_;
  Tensor* bias_ = nullptr;
  Tensor* qweight_ = nullptr;  // packed form only
  Tensor* scales_ = nullptr;
  int bits_ = 0;
  int64_t group_ = 0;
};

// Row lookup: ids [...] -> [..., dim]; weight [num, dim].
//
// Packed form (use_packed_weight): `weight` replaced by `qweight` uint8 [num, dim] and
// `scales` f32 [num, dim / group], int8 with the fixed zero point 128; forward() gathers
// with ingot::quantized_embedding and returns the layer's dtype. For a GGUF's Q8_0 table,
// which a tied LM head then reads packed too (DecoderLM::logits).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, DType dtype = DType::F32);
  Tensor forward(const Tensor& ids) const;
  // The float table; NotSupportedError when the layer is packed.
  Tensor& weight() const;
  DType dtype() const { return dtype_; }  // of forward's output (the float table's)

  // Replaces `weight` by placeholders `qweight` / `scales` (int8, `group` dividing dim).
  // ValueError when it does not, or when already packed.
  void use_packed_weight(int64_t group);
  bool is_packed() const { return group_ != 0; }
  int64_t packed_group() const { return group_; }
  Tensor& qweight() const { return *qweight_; }  // packed form only
  Tensor& scales() const { return *scales_; }

 private:
  int64_t num_, dim_;
  DType dtype_;
  Tensor* weight_;
  Tensor* qweight_ = nullptr;
  Tensor* scales_ = nullptr;
  int64_t group_ = 0;
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
