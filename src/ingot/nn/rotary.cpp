#include "ingot/nn/rotary.h"

#include <cmath>
#include <numbers>

#include "ingot/ops/functional.h"

namespace ingot::nn {
namespace {

// Default frequencies: 1 / base^(2i / dim), in float32 as torch computes them.
std::vector<float> base_inv_freq(double base, int64_t dim) {
  std::vector<float> f;
  for (int64_t i = 0; i < dim; i += 2) {
    f.push_back(1.0f / std::pow(float(base), float(i) / float(dim)));
  }
  return f;
}

double yarn_mscale(double scale, double mscale = 1.0) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(int64_t head_dim, const RopeConfig& rope,
                                 int64_t max_position_embeddings)
    : Module("RotaryEmbedding"),
      rope_(rope),
      rotary_dim_(int64_t(double(head_dim) * rope.partial_rotary_factor)),
      max_position_embeddings_(max_position_embeddings) {
  INGOT_CHECK(rotary_dim_ > 0 && rotary_dim_ % 2 == 0 && rotary_dim_ <= head_dim, ValueError,
              "[RotaryEmbedding] rotary dim {} (head_dim {} x partial_rotary_factor {}) must be "
              "even and in (0, head_dim]",
              rotary_dim_, head_dim, rope.partial_rotary_factor);
  if (rope_.type == "yarn") {
    const double factor = rope_.factor;
    if (rope_.attention_factor)
      attention_scaling_ = *rope_.attention_factor;
    else if (rope_.mscale && rope_.mscale_all_dim && *rope_.mscale && *rope_.mscale_all_dim) {
      attention_scaling_ =
          yarn_mscale(factor, *rope_.mscale) / yarn_mscale(factor, *rope_.mscale_all_dim);
    } else {
      attention_scaling_ = yarn_mscale(factor);
    }
  }
  if (rope_.type == "longrope") {
    INGOT_CHECK(rope_.original_max_position_embeddings && *rope_.original_max_position_embeddings > 0,
                ValueError, "[RotaryEmbedding] longrope needs original_max_position_embeddings");
    const double orig = double(*rope_.original_max_position_embeddings);
    const double factor = rope_.factor_given.value_or(double(max_position_embeddings) / orig);
    attention_scaling_ = rope_.attention_factor.value_or(
        factor <= 1.0 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(orig)));
    long_inv_freq_ = register_buffer("long_inv_freq", longrope_inv_freq(rope_.long_factor), false);
    inv_freq_ = register_buffer("inv_freq", longrope_inv_freq(rope_.short_factor), false);
    return;
  }
  inv_freq_ = register_buffer("inv_freq", compute_inv_freq(max_position_embeddings), false);
}

Tensor RotaryEmbedding::longrope_inv_freq(const std::vector<double>& factors) const {
  const int64_t dim = rotary_dim_;
  INGOT_CHECK(int64_t(factors.size()) == dim / 2, ValueError,
              "[RotaryEmbedding] longrope factors have {} entries; rotary dim {} needs {}",
              factors.size(), dim, dim / 2);
  // 1 / (factor_i * base^(2i / dim)) in float32, as transformers computes it.
  std::vector<float> inv;
  for (int64_t i = 0; i < dim; i += 2) {
    const float power = std::pow(float(rope_.theta), float(i) / float(dim));
    inv.push_back(1.0f / (float(factors[size_t(i / 2)]) * power));
  }
  return Tensor::from_vector<float>(inv, {int64_t(inv.size())});
}

Tensor RotaryEmbedding::compute_inv_freq(int64_t seq_len) const {
  const int64_t dim = rotary_dim_;
  const double base = rope_.theta;
  std::vector<float> inv = base_inv_freq(base, dim);
  if (rope_.type == "linear") {
    for (float& f : inv) f = f / float(rope_.factor);
  } else if (rope_.type == "dynamic") {
    // NTK-aware base growth once the sequence outgrows the trained context.
    const int64_t len = std::max(seq_len, max_position_embeddings_);
    const double scaled =
        base *
        std::pow(rope_.factor * double(len) / double(max_position_embeddings_) - (rope_.factor - 1),
                 double(dim) / double(dim - 2));
    inv = base_inv_freq(scaled, dim);
  } else if (rope_.type == "llama3") {
    const double factor = rope_.factor;
    const double old_len = double(rope_.original_max_position_embeddings.value_or(8192));
    const double low_wavelen = old_len / rope_.low_freq_factor;
    const double high_wavelen = old_len / rope_.high_freq_factor;
    for (float& f : inv) {
      const float wavelen = 2.0f * float(std::numbers::pi) / f;
      float scaled = wavelen > float(low_wavelen) ? f / float(factor) : f;
      const bool medium = !(wavelen < float(high_wavelen)) && !(wavelen > float(low_wavelen));
      if (medium) {
        const float smooth = (float(old_len) / wavelen - float(rope_.low_freq_factor)) /
                             float(rope_.high_freq_factor - rope_.low_freq_factor);
        scaled = (1 - smooth) * scaled / float(factor) + smooth * scaled;
      }
      f = scaled;
    }
  } else if (rope_.type == "yarn") {
    const double factor = rope_.factor;
    const double orig =
        double(rope_.original_max_position_embeddings.value_or(max_position_embeddings_));
    auto correction_dim = [&](double rotations) {
      return (double(dim) * std::log(orig / (rotations * 2 * std::numbers::pi))) /
             (2 * std::log(base));
    };
    double low = correction_dim(rope_.beta_fast), high = correction_dim(rope_.beta_slow);
    if (rope_.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(dim - 1));
    if (low == high) high += 0.001;  // avoid a zero-width ramp
    for (size_t i = 0; i < inv.size(); ++i) {
      const float pos_freq = std::pow(float(base), float(2 * i) / float(dim));
      const float extrapolation = 1.0f / pos_freq;
      const float interpolation = 1.0f / (float(factor) * pos_freq);
      const float ramp =
          std::clamp((float(i) - float(low)) / (float(high) - float(low)), 0.0f, 1.0f);
      const float extrapolation_factor = 1 - ramp;
      inv[i] = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
    }
  }
  return Tensor::from_vector<float>(inv, {int64_t(inv.size())});
}

std::pair<Tensor, Tensor> RotaryEmbedding::forward(const Tensor& position_ids, DType dtype) const {
  Tensor inv_freq = *inv_freq_;
  if (long_inv_freq_) {
    // The long factors once the largest position reaches the original context, for the
    // whole forward (transformers' longrope_frequency_update); ops, so it traces.
    Tensor longer = gt(amax(position_ids), *rope_.original_max_position_embeddings - 1);  // []
    inv_freq = where(longer, *long_inv_freq_, inv_freq);
  }
  if (rope_.type == "dynamic" && position_ids.has_storage() && position_ids.numel() > 0) {
    const int64_t seq_len = amax(position_ids).item<int64_t>() + 1;
    if (seq_len > max_position_embeddings_) inv_freq = compute_inv_freq(seq_len);
  }
  // freqs[b, s, i] = position[b, s] * inv_freq[i], in float32.
  Tensor pos = to(unsqueeze(position_ids, -1), DType::F32);  // [b, s, 1]
  Tensor freqs = mul(pos, inv_freq);                         // [b, s, rotary_dim / 2]
  Tensor emb = cat({freqs, freqs}, -1);                      // [b, s, rotary_dim]
  Tensor c = cos(emb), s = sin(emb);
  if (attention_scaling_ != 1.0) {
    c = mul(c, attention_scaling_);
    s = mul(s, attention_scaling_);
  }
  return {to(c, dtype), to(s, dtype)};
}

namespace {

// cat(-x2, x1) over the last dim, x = [x1, x2].
Tensor rotate_half(const Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return cat({neg(slice(x, -1, half, std::nullopt)), slice(x, -1, 0, half)}, -1);
}

Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const int64_t rd = cos.size(-1);
  if (rd == x.size(-1)) return add(mul(x, cos), mul(rotate_half(x), sin));
  Tensor rot = slice(x, -1, 0, rd), pass = slice(x, -1, rd, std::nullopt);
  return cat({add(mul(rot, cos), mul(rotate_half(rot), sin)), pass}, -1);
}

}  // namespace

std::pair<Tensor, Tensor> apply_rotary(const Tensor& q, const Tensor& k, const Tensor& cos,
                                       const Tensor& sin) {
  Tensor c = unsqueeze(cos, 1), s = unsqueeze(sin, 1);  // [b, 1, seq, rotary_dim]
  return {rotate(q, c, s), rotate(k, c, s)};
}

}  // namespace ingot::nn
