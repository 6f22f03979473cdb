// The ExecuTorch backend's op patches (seed 004's "torch patches" stage): ops the
// portable kernel library has no kernel for, replaced at trace time by the ops they are
// made of. Each is active only while the executorch exporter traces; other backends keep
// the op. Remove one when the portable library gains the kernel (or when a kernel mapping
// in kernels_*.cpp can compose it).
#include <cmath>

#include "ingot/core/error.h"
#include "ingot/exporters/moe_fallback.h"
#include "ingot/exporters/patches.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::executorch {

namespace {

// [b..., m, k] x [k, n] or [b..., m, k] x [b..., k, n] through mm / bmm on contiguous
// 2-D / 3-D views.
Tensor matmul_by_bmm(const Tensor& a, const Tensor& b) {
  const int64_t ra = a.dim(), rb = b.dim();
  INGOT_CHECK(ra >= 1 && rb >= 1, NotSupportedError,
              "[executorch] matmul of a 0-d tensor cannot be lowered");
  if (ra == 2 && rb == 2) return mm(a, b);
  if (rb == 2 && ra > 2) {
    // [..., m, k] -> [prod(...) * m, k] -> mm -> [..., m, n]
    Shape lead(a.sym_sizes().begin(), a.sym_sizes().end() - 1);
    SymInt rows = 1;
    for (const SymInt& s : lead) rows = rows * s;
    Tensor y = mm(reshape(a, {rows, a.sym_size(-1)}), b);
    lead.push_back(b.sym_size(1));
    return reshape(y, lead);
  }
  INGOT_CHECK(ra == rb && ra >= 3, NotSupportedError,
              "[executorch] matmul of ranks {} and {} has no lowering to bmm yet", ra, rb);
  // [B..., m, k] x [B..., k, n]: batch dims equal (broadcasting is not lowered).
  SymInt batch = 1;
  for (int64_t d = 0; d < ra - 2; ++d) batch = batch * a.sym_size(d);
  Tensor y = bmm(reshape(a, {batch, a.sym_size(-2), a.sym_size(-1)}),
                 reshape(b, {batch, b.sym_size(-2), b.sym_size(-1)}));
  Shape out(a.sym_sizes().begin(), a.sym_sizes().end() - 1);
  out.push_back(b.sym_size(-1));
  return reshape(y, out);
}

INGOT_REGISTER_OP_PATCH(executorch_matmul_as_bmm, "executorch", "matmul",
                        "the portable kernels have no matmul; mm / bmm on reshaped operands",
                        [](OpImpl) -> OpImpl {
                          return [](const OpArgs& a) {
                            return std::vector<Tensor>{matmul_by_bmm(a.tensor(0), a.tensor(1))};
                          };
                        });

// rms_norm(x, shape, w, eps) = x * rsqrt(mean(x^2 over the normalised dims) + eps) * w.
INGOT_REGISTER_OP_PATCH(executorch_rms_norm, "executorch", "rms_norm",
                        "the portable kernels have no rms_norm; mul, mean, add, rsqrt",
                        [](OpImpl) -> OpImpl {
                          return [](const OpArgs& a) {
                            const Tensor& x = a.tensor(0);
                            const int64_t n = int64_t(a.sym_int_list(1).size());
                            IntShape dims;
                            for (int64_t d = x.dim() - n; d < x.dim(); ++d) dims.push_back(d);
                            const double eps =
                                a.optional_f64(3).value_or(1.1920928955078125e-07);  // f32 eps
                            Tensor y = mul(x, rsqrt(add(mean(mul(x, x), dims, true), Scalar(eps))));
                            Tensor w = a.optional_tensor(2);
                            if (w.defined()) y = mul(y, w);
                            return std::vector<Tensor>{y};
                          };
                        });

// scaled_dot_product_attention(q [B, H, L, E], k [B, Hk, S, E], v [B, Hk, S, Ev], mask) =
// softmax(q k^T * scale + mask) v, with grouped kv heads repeated (enable_gqa) and the
// batched products as bmm over [B * H, ., .].
INGOT_REGISTER_OP_PATCH(
    executorch_sdpa, "executorch", "scaled_dot_product_attention",
    "the portable kernels have no attention kernel; bmm, softmax and masking",
    [](OpImpl) -> OpImpl {
      return [](const OpArgs& a) {
        Tensor q = a.tensor(0), k = a.tensor(1), v = a.tensor(2);
        Tensor mask = a.optional_tensor(3);
        INGOT_CHECK(!a.boolean(5), NotSupportedError,
                    "[executorch] scaled_dot_product_attention with is_causal=true is not "
                    "lowered; pass the causal mask explicitly");
        INGOT_CHECK(q.dim() == 4, NotSupportedError,
                    "[executorch] scaled_dot_product_attention expects 4-d [B, H, L, E] inputs");
        const SymInt B = q.sym_size(0), H = q.sym_size(1), L = q.sym_size(2), E = q.sym_size(3);
        const SymInt Hk = k.sym_size(1), S = k.sym_size(2), Ev = v.sym_size(3);
        const double scale = a.optional_f64(6).value_or(1.0 / std::sqrt(double(q.size(3))));
        if (a.boolean(7) && k.size(1) != q.size(1)) {  // repeat_interleave of the kv heads
          const SymInt g = q.size(1) / k.size(1);
          k = reshape(expand(unsqueeze(k, 2), {B, Hk, g, S, E}), {B, H, S, E});
          v = reshape(expand(unsqueeze(v, 2), {B, Hk, g, S, Ev}), {B, H, S, Ev});
        }
        const SymInt BH = B * H;
        Tensor scores = bmm(reshape(q, {BH, L, E}), transpose(reshape(k, {BH, S, E}), 1, 2));
        scores = reshape(mul(scores, Scalar(scale)), {B, H, L, S});
        if (mask.defined()) {
          if (mask.dtype() == DType::Bool)
            scores = where(mask, scores, full({}, Scalar(-INFINITY), scores.dtype()));
          else
            scores = add(scores, mask);
        }
        // A fully masked row is all -inf: softmax gives NaN there; ingot's kernel (and
        // PyTorch's math backend, _safe_softmax) give zeros.
        Tensor p = softmax(scores, -1);
        p = where(isnan(p), full({}, Scalar(0.0), p.dtype()), p);
        Tensor out = bmm(reshape(p, {BH, L, S}), reshape(v, {BH, S, Ev}));
        return std::vector<Tensor>{reshape(out, {B, H, L, Ev})};
      };
    });

}  // namespace

// The portable kernels have no grouped expert matmul: Mixtral / Qwen3-MoE layers are
// exported with every expert computed and weighted by its router weight (core ops only).
INGOT_REGISTER_OP_PATCH(executorch_dense_moe_experts, "executorch", "moe_experts",
                        "the portable kernels have no grouped expert matmul",
                        dense_moe_experts_patch);

}  // namespace ingot::exporters::executorch
