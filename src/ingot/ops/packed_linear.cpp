// ingot::packed_linear: an f32 linear whose weight was rearranged once into the panels
// the GEMM kernels read (ops/cpu/gemm.h PanelWeight), so no call packs or transposes it.
// Only the runtime's rewrite writes it (runtime/passes/packed_linear_weights.h); exported
// programs keep `linear`. The decomposition unpacks the panels (core ops) and runs
// `linear`, so a backend without a kernel for it still runs the program.
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> packed_linear_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &panels = a.tensor(1);
  const Tensor bias = a.optional_tensor(2);
  const int64_t n = a.int_(3);
  INGOT_CHECK(x.dtype() == DType::F32 && panels.dtype() == DType::F32, DTypeError,
              "[{}] input and panels must be float32, got {} and {}", a.name(), x.dtype(),
              panels.dtype());
  INGOT_CHECK(panels.dim() == 3, ShapeError,
              "[{}] panels must be [panels, in_features, width], got {}", a.name(),
              panels.shape_string());
  const int64_t count = panels.size(0), width = panels.size(2);
  INGOT_CHECK(
      count >= 1 && width > 0 && width <= 64 && n > (count - 1) * width && n <= count * width,
      ShapeError, "[{}] out_features {} does not fit {} panels of width {}", a.name(), n, count,
      width);
  INGOT_CHECK(x.dim() >= 1 && bool(x.sym_size(x.dim() - 1) == panels.sym_size(1)), ShapeError,
              "[{}] input of shape {} does not match the weight's in_features {}", a.name(),
              x.shape_string(), panels.size(1));
  if (bias.defined()) {
    INGOT_CHECK(bias.dim() == 1 && bias.size(0) == n && bias.dtype() == DType::F32, ShapeError,
                "[{}] bias must be float32 [{}], got {} {}", a.name(), n, bias.dtype(),
                bias.shape_string());
  }
  Shape out(x.sym_sizes().begin(), x.sym_sizes().end() - 1);
  out.push_back(SymInt(n));
  return {OutputMeta{DType::F32, out}};
}

void packed_linear_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor x = contiguous(a.tensor(0));  // [m, k] rows
  const Tensor panels = contiguous(a.tensor(1));
  const Tensor bias = a.optional_tensor(2);
  const cpu::PanelWeight w{panels.data<float>(), a.int_(3), panels.size(1), panels.size(2)};
  const int64_t m = out[0].numel() / w.n;
  // y: the output, or a contiguous temporary copied into it. A bias is y's start (beta 1).
  const Tensor y = out[0].is_contiguous() ? out[0] : Tensor::empty(out[0].sizes(), DType::F32);
  if (bias.defined()) cpu::copy_cast(y, bias);
  cpu::gemm_panels(m, x.data<float>(), w.k, w, y.data<float>(), w.n, bias.defined() ? 1.0f : 0.0f);
  if (!y.is_same(out[0])) cpu::copy_cast(out[0], y);
}

// The weight [out, in] back from its panels: [count, in, width] -> [count, width, in] ->
// [count * width, in], the first out_features rows.
std::vector<Tensor> packed_linear_decomposition(const OpArgs& a) {
  const Tensor& panels = a.tensor(1);
  const Tensor rows = reshape(permute(panels, {0, 2, 1}),
                              {panels.sym_size(0) * panels.sym_size(2), panels.sym_size(1)});
  const Tensor weight = narrow(rows, 0, 0, a.int_(3));
  return {linear(a.tensor(0), weight, a.optional_tensor(2))};
}

const OpRegistrar kPackedLinear(
    define_op("ingot::packed_linear(Tensor input, Tensor panels, Tensor? bias=None, int "
              "out_features=0) -> Tensor")
        .shape(packed_linear_shape)
        .cpu(packed_linear_kernel)
        .decompose(packed_linear_decomposition));

const OpHandle kPackedLinearOp("ingot::packed_linear");

}  // namespace

Tensor pack_linear_weight(const Tensor& weight, int64_t width) {
  INGOT_CHECK(weight.dim() == 2 && weight.dtype() == DType::F32, DTypeError,
              "[pack_linear_weight] weight must be a 2-D float32 tensor, got {} {}", weight.dtype(),
              weight.shape_string());
  const Tensor w = contiguous(weight);
  const int64_t n = w.size(0), k = w.size(1);
  INGOT_CHECK(width > 0 && width <= 64, ValueError,
              "[pack_linear_weight] width must be in [1, 64], got {}", width);
  Tensor panels = Tensor::empty({(n + width - 1) / width, k, width}, DType::F32);
  cpu::pack_weight_panels(w.data<float>(), k, n, k, width, panels.data<float>());
  return panels;
}

int64_t packed_linear_width() {
  return cpu::gemm_panel_width();
}

Tensor packed_linear(const Tensor& input, const Tensor& panels, const Tensor& bias,
                     int64_t out_features, std::source_location where) {
  CallSiteScope call_site(where);
  return kPackedLinearOp(
      {input, panels, bias.defined() ? Value(bias) : Value(), Value(SymInt(out_features))})[0];
}

}  // namespace ingot
