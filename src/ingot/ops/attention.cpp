// scaled_dot_product_attention: validation, shape function and the bridge to the fused
// CPU kernel (cpu/attention.h).
//
// Decisions where PyTorch leaves room (each checked against ATen's math backend,
// aten/src/ATen/native/transformers/attention.cpp, and the documented reference):
// - A query row whose every score is -inf (bool mask all false, additive mask all -inf)
//   gives zeros: since PyTorch 2.5 the math backend uses _safe_softmax, which zeroes
//   fully masked rows instead of producing NaN.
// - is_causal is the top-left aligned lower triangle, torch.ones(L, S).tril(0): key j
//   is visible to query i iff j <= i, whatever L and S are.
// - Without enable_gqa, key/value may have one head that broadcasts over the query
//   heads (matmul broadcasting in the math backend); any other head mismatch is an
//   error. With enable_gqa, Hq must be a multiple of Hkv.
// - Batch dims of key/value (before the head dim) equal query's or are 1; the output
//   has query's batch dims.
// - The mask is bool, float32, or of query's dtype (ATen's validate_sdpa_input).
// - dropout_p must be 0: ingot is inference only.
#include "ingot/ops/cpu/attention.h"

#include <cmath>

#include "ingot/ops/functional/nn.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

bool sym_eq(const SymInt& a, const SymInt& b) {
  return bool(a == b);
}
bool sym_is_one(const SymInt& a) {
  return a.maybe_int() == 1 || bool(a == SymInt(1));
}
// `a` broadcasts to `b`: a literal 1 is checked first so that comparing it with a
// symbolic size takes no guard (a guard Ne(batch, 1) would specialise the export).
bool broadcasts_to(const SymInt& a, const SymInt& b) {
  return a.maybe_int() == 1 || sym_eq(a, b) || sym_is_one(a);
}

std::vector<OutputMeta> sdpa_shape(const OpArgs& a) {
  const Tensor& q = a.tensor(0);
  const Tensor& k = a.tensor(1);
  const Tensor& v = a.tensor(2);
  const Tensor mask = a.optional_tensor(3);
  const double dropout_p = a.f64(4);
  const bool is_causal = a.boolean(5);
  const bool enable_gqa = a.boolean(7);

  check_floating(q, kOp, "query");
  INGOT_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
              "[{}] query, key and value must have the same dtype, got query {}, key {}, "
              "value {}",
              kOp, q.dtype(), k.dtype(), v.dtype());
  INGOT_CHECK(dropout_p == 0.0, NotSupportedError,
              "[{}] dropout_p must be 0 (ingot runs inference only), got {}", kOp, dropout_p);
  INGOT_CHECK(!(is_causal && mask.defined()), ValueError,
              "[{}] attn_mask must not be given together with is_causal=True (got attn_mask "
              "of shape {}); fold the causal mask into attn_mask instead",
              kOp, mask.defined() ? mask.shape_string() : "");
  const int64_t rank = q.dim();
  INGOT_CHECK(rank >= 2 && k.dim() == rank && v.dim() == rank, ShapeError,
              "[{}] query, key and value must have the same rank >= 2 ([..., heads, seq, "
              "head_dim]), got query {}, key {}, value {}",
              kOp, q.shape_string(), k.shape_string(), v.shape_string());
  const Shape& qs = q.sym_sizes();
  const Shape& ks = k.sym_sizes();
  const Shape& vs = v.sym_sizes();
  const size_t r = size_t(rank);
  INGOT_CHECK(sym_eq(qs[r - 1], ks[r - 1]), ShapeError,
              "[{}] query and key must have the same head_dim (last dim), got query {} and "
              "key {}",
              kOp, q.shape_string(), k.shape_string());
  INGOT_CHECK(sym_eq(ks[r - 2], vs[r - 2]), ShapeError,
              "[{}] key and value must have the same sequence length (dim -2), got key {} "
              "and value {}",
              kOp, k.shape_string(), v.shape_string());
  if (rank >= 3) {
    const SymInt &hq = qs[r - 3], &hk = ks[r - 3], &hv = vs[r - 3];
    INGOT_CHECK(sym_eq(hk, hv), ShapeError,
                "[{}] key and value must have the same number of heads (dim -3), got key {} "
                "and value {}",
                kOp, k.shape_string(), v.shape_string());
    if (enable_gqa) {
      INGOT_CHECK(!(hk.maybe_int() == 0) && bool(hq % hk == 0), ShapeError,
                  "[{}] with enable_gqa the query heads ({}) must be a multiple of the key/value "
                  "heads ({}); got query {} and key {}",
                  kOp, hq.str(), hk.str(), q.shape_string(), k.shape_string());
    } else {
      INGOT_CHECK(broadcasts_to(hk, hq), ShapeError,
                  "[{}] query has {} heads but key/value have {} (query {}, key {}); pass "
                  "enable_gqa=true for grouped-query attention",
                  kOp, hq.str(), hk.str(), q.shape_string(), k.shape_string());
    }
    for (size_t d = 0; d + 3 < r; ++d) {
      for (const Tensor* t : {&k, &v}) {
        const SymInt& s = t->sym_sizes()[d];
        INGOT_CHECK(broadcasts_to(s, qs[d]), ShapeError,
                    "[{}] batch dim {} of {} ({}) must equal query's ({}) or be 1; got query "
                    "{}, key {}, value {}",
                    kOp, d, t == &k ? "key" : "value", s.str(), qs[d].str(), q.shape_string(),
                    k.shape_string(), v.shape_string());
      }
    }
  }
  Shape out = qs;
  out[r - 1] = vs[r - 1];
  if (mask.defined()) {
    INGOT_CHECK(
        mask.dtype() == DType::Bool || mask.dtype() == DType::F32 || mask.dtype() == q.dtype(),
        DTypeError, "[{}] attn_mask must be bool, float32 or query's dtype ({}), got {}", kOp,
        q.dtype(), mask.dtype());
    Shape target = qs;
    target[r - 1] = ks[r - 2];  // [..., Hq, Lq, S]
    const Shape& ms = mask.sym_sizes();
    bool fits = ms.size() <= target.size();
    for (size_t d = 0; fits && d < ms.size(); ++d) {
      const SymInt& t = target[target.size() - ms.size() + d];
      fits = broadcasts_to(ms[d], t);
    }
    INGOT_CHECK(fits, ShapeError,
                "[{}] attn_mask of shape {} does not broadcast to the score shape {} "
                "([..., Hq, Lq, S])",
                kOp, mask.shape_string(), shape_str(target));
  }
  return {OutputMeta{q.dtype(), out}};
}

// Element offset of every flattened batch index (the leading `nb` dims of `sizes`) in
// tensor t, which lacks the first `missing` of those dims (right alignment); size-1
// dims broadcast and contribute 0.
std::vector<int64_t> batch_offsets(const IntShape& sizes, size_t nb, const Tensor& t,
                                   size_t missing) {
  int64_t total = 1;
  for (size_t d = 0; d < nb; ++d) total *= sizes[d];
  std::vector<int64_t> out(size_t(total), 0);
  if (!t.defined()) return out;
  IntShape idx(nb, 0);
  for (int64_t b = 0; b < total; ++b) {
    int64_t off = 0;
    for (size_t d = missing; d < nb; ++d) {
      const size_t td = d - missing;
      if (t.size(int64_t(td)) != 1) off += idx[d] * t.stride(int64_t(td));
    }
    out[size_t(b)] = off;
    for (size_t d = nb; d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

void sdpa_kernel(const OpArgs& a, std::span<const Tensor> outputs) {
  const Tensor& q = a.tensor(0);
  const Tensor& k = a.tensor(1);
  const Tensor& v = a.tensor(2);
  const Tensor mask = a.optional_tensor(3);
  const IntShape qs = q.sizes();
  const size_t r = qs.size();
  const bool has_heads = r >= 3;
  const size_t nb = has_heads ? r - 3 : 0;  // batch dims before the head dim

  cpu::AttentionProblem p;
  p.dtype = q.dtype();
  p.batch = 1;
  for (size_t d = 0; d < nb; ++d) p.batch *= qs[d];
  p.hq = has_heads ? qs[r - 3] : 1;
  p.hkv = has_heads ? k.size(int64_t(r - 3)) : 1;
  p.lq = qs[r - 2];
  p.s = k.size(-2);
  p.e = qs[r - 1];
  p.ev = v.size(-1);
  p.q = q.raw_data();
  p.k = k.raw_data();
  p.v = v.raw_data();
  p.out = outputs[0].raw_data();
  p.q_batch_offset = batch_offsets(qs, nb, q, 0);
  p.k_batch_offset = batch_offsets(qs, nb, k, 0);
  p.v_batch_offset = batch_offsets(qs, nb, v, 0);
  p.q_sh = has_heads ? q.stride(-3) : 0;
  p.q_sl = q.stride(-2);
  p.q_se = q.stride(-1);
  // A single kv head serving several query heads (broadcast or MQA) needs no head stride.
  p.k_sh = has_heads && p.hkv > 1 ? k.stride(-3) : 0;
  p.k_ss = k.stride(-2);
  p.k_se = k.stride(-1);
  p.v_sh = has_heads && p.hkv > 1 ? v.stride(-3) : 0;
  p.v_ss = v.stride(-2);
  p.v_se = v.stride(-1);
  if (mask.defined()) {
    p.mask_kind =
        mask.dtype() == DType::Bool ? cpu::AttentionMask::Bool : cpu::AttentionMask::Additive;
    p.mask_dtype = mask.dtype();
    p.mask = mask.raw_data();
    const int64_t mr = mask.dim();
    // Stride of the mask along score dim `from_end` (1 = S, 2 = Lq, 3 = Hq), 0 if absent
    // or broadcast.
    auto mstride = [&](int64_t from_end) -> int64_t {
      if (from_end > mr) return 0;
      return mask.size(mr - from_end) == 1 ? 0 : mask.stride(mr - from_end);
    };
    p.m_ss = mstride(1);
    p.m_sl = mstride(2);
    p.m_sh = has_heads ? mstride(3) : 0;
    // Batch dims of the mask: target rank is r; the mask lacks r - mr leading dims.
    const size_t target_rank = r;
    const size_t missing = target_rank > size_t(mr) ? target_rank - size_t(mr) : 0;
    if (missing >= nb) {
      p.mask_batch_offset.assign(size_t(p.batch), 0);
    } else {
      p.mask_batch_offset = batch_offsets(qs, nb, mask, missing);
    }
  }
  p.causal = a.boolean(5);
  const std::optional<double> scale = a.optional_f64(6);
  p.scale = scale ? *scale : 1.0 / std::sqrt(double(p.e));
  cpu::scaled_dot_product_attention(p);
}

const OpRegistrar kSdpa(
    define_op("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
              "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, "
              "float? scale=None, bool enable_gqa=False) -> Tensor")
        .shape(sdpa_shape)
        .cpu(sdpa_kernel));

const OpHandle kSdpaOp("scaled_dot_product_attention");

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& mask, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, std::source_location where) {
  CallSiteScope call_site(where);
  return kSdpaOp({query, key, value, mask, 0.0, is_causal, scale, enable_gqa})[0];
}

}  // namespace ingot
