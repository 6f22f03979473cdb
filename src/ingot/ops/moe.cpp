// moe_experts: the expert half of a mixture-of-experts block (Mixtral, Qwen3-MoE).
//
//   out[t] = sum_j weight[t, j] * down_e( act(gate_e x[t]) * up_e x[t] ),  e = index[t, j]
//
// with hidden [T, H], index [T, k] int64 (the router's top-k experts per token), weight
// [T, k], and per expert e: gate[e], up[e] [I, H], down[e] [H, I] (the checkpoint's own
// tensors, unstacked). Shapes never depend on the routing, so it exports without
// data-dependent sizes. The CPU kernel groups the tokens by expert and runs three GEMMs
// per expert that has tokens: only the selected experts are computed. Contributions are
// added in ascending expert order, as transformers' expert loop does.
#include <cmath>

#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional/nn.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

bool shape_is(const Tensor& t, const SymInt& rows, const SymInt& cols) {
  return t.dim() == 2 && bool(t.sym_size(0) == rows) && bool(t.sym_size(1) == cols);
}

std::vector<OutputMeta> moe_experts_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const Tensor& index = a.tensor(1);
  const Tensor& weight = a.tensor(2);
  const TensorList &gate = a.tensor_list(3), &up = a.tensor_list(4), &down = a.tensor_list(5);
  check_floating(x, a.name(), "hidden");
  INGOT_CHECK(x.dim() == 2, ShapeError, "[{}] hidden must be [tokens, hidden], got {}", a.name(),
              x.shape_string());
  INGOT_CHECK(index.dtype() == DType::I64 && index.dim() == 2 &&
                  bool(index.sym_size(0) == x.sym_size(0)),
              ShapeError, "[{}] expert_index must be int64 [tokens, k] with tokens = {}, got {} {}",
              a.name(), x.sym_size(0).str(), index.dtype(), index.shape_string());
  INGOT_CHECK(weight.dtype() == x.dtype() && shape_is(weight, index.sym_size(0), index.sym_size(1)),
              ShapeError, "[{}] expert_weight must be {} {} like expert_index, got {} {}", a.name(),
              x.dtype(), index.shape_string(), weight.dtype(), weight.shape_string());
  INGOT_CHECK(!gate.empty() && gate.size() == up.size() && gate.size() == down.size(), ValueError,
              "[{}] gate, up and down need one tensor per expert, got {}, {} and {}", a.name(),
              gate.size(), up.size(), down.size());
  const SymInt hidden = x.sym_size(1);
  const SymInt inter = gate[0].dim() == 2 ? gate[0].sym_size(0) : SymInt(0);
  for (size_t e = 0; e < gate.size(); ++e) {
    const bool ok = gate[e].dtype() == x.dtype() && up[e].dtype() == x.dtype() &&
                    down[e].dtype() == x.dtype() && shape_is(gate[e], inter, hidden) &&
                    shape_is(up[e], inter, hidden) && shape_is(down[e], hidden, inter);
    INGOT_CHECK(ok, ShapeError,
                "[{}] expert {}: gate and up must be {} [intermediate, {}] and down [{}, "
                "intermediate], got gate {}, up {}, down {}",
                a.name(), e, x.dtype(), hidden.str(), hidden.str(), gate[e].shape_string(),
                up[e].shape_string(), down[e].shape_string());
  }
  const std::string& act = a.string(6);
  INGOT_CHECK(act == "silu" || act == "gelu_tanh", NotSupportedError,
              "[{}] activation '{}' is not supported (silu, gelu_tanh)", a.name(), act);
  return {OutputMeta{x.dtype(), x.sym_sizes()}};
}

// t as a contiguous f32 tensor (a copy unless it already is one).
Tensor f32_contiguous(const Tensor& t) {
  if (t.dtype() == DType::F32 && t.is_contiguous()) return t;
  Tensor c = Tensor::empty(t.sizes(), DType::F32);
  cpu::copy_cast(c, t);
  return c;
}

// A contiguous view of a weight matrix (copied only when strided).
Tensor contiguous_weight(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor c = Tensor::empty(t.sizes(), t.dtype());
  cpu::copy_cast(c, t);
  return c;
}

// C[m, n] = A[m, k] (f32, row-major) · W[n, k]^T (W row-major, any gemm dtype).
void linear_rows(const float* a, int64_t m, int64_t k, const Tensor& w, float* c) {
  cpu::GemmArgs g;
  g.m = m;
  g.n = w.size(0);
  g.k = k;
  g.a = cpu::MatrixView{a, DType::F32, k, 1};
  g.b = cpu::MatrixView{w.raw_data(), w.dtype(), 1, k};
  g.c = c;
  g.c_dtype = DType::F32;
  g.ldc = g.n;
  cpu::gemm(g);
}

float activate(const std::string& act, float v) {
  if (act == "silu") return v / (1.0f + std::exp(-v));
  // gelu, tanh approximation
  const float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
  return 0.5f * v * (1.0f + std::tanh(inner));
}

void moe_experts_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor x = f32_contiguous(a.tensor(0));           // [T, H]
  const Tensor weight = f32_contiguous(a.tensor(2));      // [T, k]
  const Tensor index = a.tensor(1).is_contiguous() ? a.tensor(1) : [&] {
    Tensor c = Tensor::empty(a.tensor(1).sizes(), DType::I64);
    cpu::copy_cast(c, a.tensor(1));
    return c;
  }();
  const TensorList &gate = a.tensor_list(3), &up = a.tensor_list(4), &down = a.tensor_list(5);
  const std::string& act = a.string(6);
  const int64_t tokens = x.size(0), hidden = x.size(1), k = index.size(1);
  const int64_t experts = int64_t(gate.size()), inter = gate[0].size(0);
  const int64_t* idx = index.data<int64_t>();
  const float* xd = x.data<float>();
  const float* wd = weight.data<float>();

  // Token slots (t * k + j) per expert, in token order.
  std::vector<std::vector<int64_t>> slots(static_cast<size_t>(experts));
  for (int64_t s = 0; s < tokens * k; ++s) {
    INGOT_CHECK(idx[s] >= 0 && idx[s] < experts, ValueError,
                "[{}] expert_index holds {} at token {}; the model has {} experts", a.name(),
                idx[s], s / k, experts);
    slots[size_t(idx[s])].push_back(s);
  }
  std::vector<float> acc(size_t(tokens * hidden), 0.0f);  // [T, H]
  std::vector<float> xs, g, u, y;
  for (int64_t e = 0; e < experts; ++e) {
    const std::vector<int64_t>& mine = slots[size_t(e)];
    const int64_t n = int64_t(mine.size());
    if (n == 0) continue;  // an expert no token chose costs nothing
    xs.resize(size_t(n * hidden));
    for (int64_t r = 0; r < n; ++r) {
      const float* row = xd + (mine[size_t(r)] / k) * hidden;
      std::copy(row, row + hidden, xs.begin() + r * hidden);
    }
    g.resize(size_t(n * inter));
    u.resize(size_t(n * inter));
    y.resize(size_t(n * hidden));
    linear_rows(xs.data(), n, hidden, contiguous_weight(gate[size_t(e)]), g.data());  // [n, I]
    linear_rows(xs.data(), n, hidden, contiguous_weight(up[size_t(e)]), u.data());    // [n, I]
    for (size_t i = 0; i < g.size(); ++i) g[i] = activate(act, g[i]) * u[i];
    linear_rows(g.data(), n, inter, contiguous_weight(down[size_t(e)]), y.data());    // [n, H]
    for (int64_t r = 0; r < n; ++r) {
      const int64_t s = mine[size_t(r)];
      float* dst = acc.data() + (s / k) * hidden;
      const float w = wd[s];
      for (int64_t h = 0; h < hidden; ++h) dst[h] += w * y[size_t(r * hidden + h)];
    }
  }
  Tensor result = Tensor::from_vector<float>(acc, {tokens, hidden});
  cpu::copy_cast(out[0], result);
}

const OpRegistrar kMoeExperts(
    define_op("moe_experts(Tensor hidden, Tensor expert_index, Tensor expert_weight, "
              "Tensor[] gate, Tensor[] up, Tensor[] down, str act='silu') -> Tensor")
        .shape(moe_experts_shape)
        .cpu(moe_experts_kernel));

const OpHandle kMoeExpertsOp("moe_experts");

}  // namespace

Tensor moe_experts(const Tensor& hidden, const Tensor& expert_index, const Tensor& expert_weight,
                   const TensorList& gate, const TensorList& up, const TensorList& down,
                   const std::string& act, std::source_location where) {
  CallSiteScope call_site(where);
  return kMoeExpertsOp({hidden, expert_index, expert_weight, gate, up, down, std::string(act)})[0];
}

}  // namespace ingot
