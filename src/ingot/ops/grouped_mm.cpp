// transformers::grouped_mm_fallback: the grouped matrix product of transformers'
// mixture-of-experts layers (transformers/integrations/moe.py), which torch.export
// records as a custom op in Mixtral / Qwen3-MoE programs.
//
//   out[r] = input[r] · weight[e]   for offs[e-1] <= r < offs[e]   (offs[-1] = 0)
//
// input [S, K] holds the token rows sorted by expert, weight [E, K, N] one matrix per
// expert (any strides: torch passes the transposed parameter), offs [E] int32/int64 the
// cumulative row counts. Rows at or past offs[E-1] are 0. Output [S, N] in input's dtype;
// its shape never depends on offs, so a program with it has no data-dependent size.
// The kernel runs one GEMM per expert that has rows (experts with none cost nothing).
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> grouped_mm_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const Tensor& w = a.tensor(1);
  const Tensor& offs = a.tensor(2);
  check_floating(x, a.name(), "input");
  INGOT_CHECK(x.dim() == 2, ShapeError, "[{}] input must be [rows, in], got {}", a.name(),
              x.shape_string());
  INGOT_CHECK(w.dim() == 3 && w.dtype() == x.dtype() && bool(w.sym_size(1) == x.sym_size(1)),
              ShapeError, "[{}] weight must be {} [experts, {}, out], got {} {}", a.name(),
              dtype_name(x.dtype()), x.sym_size(1).str(), dtype_name(w.dtype()), w.shape_string());
  INGOT_CHECK((offs.dtype() == DType::I32 || offs.dtype() == DType::I64) && offs.dim() == 1 &&
                  bool(offs.sym_size(0) == w.sym_size(0)),
              ShapeError,
              "[{}] offs must be int32/int64 [{}] (one cumulative row count per expert), got {} {}",
              a.name(), w.sym_size(0).str(), dtype_name(offs.dtype()), offs.shape_string());
  return {OutputMeta{x.dtype(), {x.sym_size(0), w.sym_size(2)}}};
}

void grouped_mm_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x_in = a.tensor(0);
  const Tensor& w = a.tensor(1);
  const Tensor offs = a.tensor(2).is_contiguous() ? a.tensor(2) : contiguous(a.tensor(2));
  const int64_t rows = x_in.size(0), k = x_in.size(1), n = w.size(2), experts = w.size(0);
  // The rows as contiguous f32 (the GEMM's A operand), the result in f32.
  Tensor x = x_in;
  if (x.dtype() != DType::F32 || !x.is_contiguous()) {
    x = Tensor::empty(x_in.sizes(), DType::F32);
    cpu::copy_cast(x, x_in);
  }
  Tensor y = out[0].dtype() == DType::F32 && out[0].is_contiguous()
                 ? out[0]
                 : Tensor::empty({rows, n}, DType::F32);
  float* yd = y.data<float>();
  std::fill(yd, yd + rows * n, 0.0f);
  const char* wd = static_cast<const char*>(w.raw_data());
  const size_t item = itemsize(w.dtype());
  int64_t start = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t end =
        offs.dtype() == DType::I32 ? offs.data<int32_t>()[e] : offs.data<int64_t>()[e];
    INGOT_CHECK(end >= start && end <= rows, ValueError,
                "[{}] offs[{}] = {}: offsets must be non-decreasing and at most the {} input rows "
                "(offs[{}] = {})",
                a.name(), e, end, rows, e - 1, start);
    if (end > start && n > 0) {
      cpu::GemmArgs g;
      g.m = end - start;
      g.n = n;
      g.k = k;
      g.a = cpu::MatrixView{x.data<float>() + start * k, DType::F32, k, 1};
      g.b =
          cpu::MatrixView{wd + size_t(e * w.stride(0)) * item, w.dtype(), w.stride(1), w.stride(2)};
      g.c = yd + start * n;
      g.c_dtype = DType::F32;
      g.ldc = n;
      cpu::gemm(g);
    }
    start = end;
  }
  if (y.raw_data() != out[0].raw_data()) cpu::copy_cast(out[0], y);
}

// The decomposition every graph backend runs: each row gathers its expert's matrix, so
// no shape depends on offs and the row count stays symbolic (S rows, E experts):
//   e    = sum(offs[None, :] <= arange(S)[:, None], 1)           [S] in [0, E]
//   W_r  = weight[min(e, E - 1)]                                 [S, K, N]
//   out  = where(e < E, (input[:, None, :] @ W_r)[:, 0, :], 0)   [S, N]
// in float32 (the kernel's accumulation), then the output dtype. It gathers S·K·N weights
// (fine for the programs it serves; a per-expert loop would avoid the copy).
std::vector<Tensor> grouped_mm_decomposition(const OpArgs& a) {
  const Tensor& input = a.tensor(0);
  const Tensor x = to(input, DType::F32);                            // [S, K]
  const Tensor w = to(a.tensor(1), DType::F32);                      // [E, K, N]
  const Tensor offs = to(a.tensor(2), DType::I64);                   // [E]
  const int64_t experts = w.size(0);                                 // a parameter's static size
  const Tensor rows = arange_symint(input.sym_size(0), DType::I64);  // [S]
  const Tensor past = le(unsqueeze(offs, 0), unsqueeze(rows, 1));    // [S, E]
  const Tensor expert = sum(to(past, DType::I64), {1});              // [S]
  const Tensor valid = lt(expert, Scalar(experts));                  // [S]
  const Tensor chosen =
      index_select(w, 0, clamp(expert, std::nullopt, Scalar(experts - 1)));  // [S, K, N]
  Tensor y = squeeze(matmul(unsqueeze(x, 1), chosen), 1);                    // [S, N]
  y = where(unsqueeze(valid, 1), y, full({}, Scalar(0.0), DType::F32));
  return {to(y, grouped_mm_shape(a).at(0).dtype)};
}

const OpRegistrar kGroupedMm(
    define_op(
        "transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs) -> Tensor")
        .shape(grouped_mm_shape)
        .cpu(grouped_mm_kernel)
        .decompose(grouped_mm_decomposition));

}  // namespace
}  // namespace ingot
