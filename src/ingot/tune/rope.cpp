#include "ingot/tune/rope.h"

#include "ingot/nn/rotary.h"
#include "ingot/ops/functional.h"

namespace ingot::tune {
namespace {

// The frequencies as nn/rotary.h computes them (float32, transformers' formulas), read
// from a temporary RotaryEmbedding's inv_freq buffer.
Tensor frequencies(int64_t dim, double base, const Llama3Scaling* scaling) {
  nn::RopeConfig rope;
  rope.theta = base;
  int64_t max_positions = 0;
  if (scaling) {
    rope.type = "llama3";
    rope.factor = scaling->scale_factor;
    rope.low_freq_factor = scaling->low_freq_factor;
    rope.high_freq_factor = scaling->high_freq_factor;
    rope.original_max_position_embeddings = scaling->old_context_len;
  }
  nn::RotaryEmbedding rotary(dim, rope, max_positions);
  for (const nn::NamedSlot& b : rotary.named_buffers()) {
    if (b.fqn == "inv_freq") return b.slot->value;
  }
  INGOT_THROW(InternalError,
              "[RotaryPositionalEmbeddings] nn::RotaryEmbedding has no inv_freq buffer");
}

}  // namespace

RotaryPositionalEmbeddings::RotaryPositionalEmbeddings(int64_t dim, int64_t max_seq_len,
                                                       double base)
    : RotaryPositionalEmbeddings("RotaryPositionalEmbeddings", dim, max_seq_len,
                                 frequencies(dim, base, nullptr)) {}

RotaryPositionalEmbeddings::RotaryPositionalEmbeddings(std::string type_name, int64_t dim,
                                                       int64_t max_seq_len, const Tensor& theta)
    : PositionalEmbedding(std::move(type_name)), dim_(dim), max_seq_len_(max_seq_len) {
  INGOT_CHECK(dim > 0 && dim % 2 == 0 && max_seq_len > 0, ValueError,
              "[{}] dim ({}) must be positive and even and max_seq_len ({}) positive",
              this->type_name(), dim, max_seq_len);
  Tensor positions = to(arange(max_seq_len, DType::I64), DType::F32);  // [max_seq_len]
  Tensor angles = mul(unsqueeze(positions, 1), unsqueeze(theta, 0));   // [max_seq_len, dim/2]
  cache_ = register_buffer("cache", stack({cos(angles), sin(angles)}, -1), false);
}

Tensor RotaryPositionalEmbeddings::forward(const Tensor& x, const Tensor& input_pos) const {
  INGOT_CHECK(x.dim() == 4 && x.sym_size(3).maybe_int() == dim_, ShapeError,
              "[{}] x must be [b, s, n_h, {}], got {}", type_name(), dim_, x.shape_string());
  const SymInt b = x.sym_size(0), s = x.sym_size(1), n = x.sym_size(2);
  const int64_t half = dim_ / 2;
  Tensor table;  // [s or b * s, dim / 2, 2]
  if (input_pos.defined()) {
    table = index_select(*cache_, 0, reshape(input_pos, {-1}));
  } else {
    table = slice(*cache_, 0, 0, s);
  }
  Tensor pairs = reshape(to(x, DType::F32), {b, s, n, half, 2});  // [b, s, n_h, dim/2, 2]
  const SymInt rows = input_pos.defined() ? input_pos.sym_size(0) : SymInt(1);
  table = view(table, {rows, s, 1, half, 2});  // [b or 1, s, 1, dim/2, 2]
  Tensor x0 = select(pairs, -1, 0), x1 = select(pairs, -1, 1);
  Tensor c = select(table, -1, 0), sn = select(table, -1, 1);
  Tensor rotated = stack({sub(mul(x0, c), mul(x1, sn)), add(mul(x1, c), mul(x0, sn))}, -1);
  return to(flatten(rotated, 3), x.dtype());  // [b, s, n_h, dim]
}

Llama3ScaledRoPE::Llama3ScaledRoPE(int64_t dim, int64_t max_seq_len, double base,
                                   Llama3Scaling scaling)
    : RotaryPositionalEmbeddings("Llama3ScaledRoPE", dim, max_seq_len,
                                 frequencies(dim, base, &scaling)) {}

}  // namespace ingot::tune
