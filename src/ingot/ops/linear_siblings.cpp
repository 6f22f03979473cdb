// ingot::linear2 / ingot::linear3: two or three float linears (no bias) on the same input,
// one output each: out_j = input · weight_j^T. The runtime's fuse_sibling_float_linears
// pass writes them for an attention block's q / k / v and a gated MLP's gate / up
// (runtime/passes/fuse_sibling_linears.h). The kernel runs cpu::gemm_siblings: in decode,
// one pass of the thread pool over the weights' concatenated rows instead of one per
// linear; each output equals its own linear's bit for bit. The decomposition is the
// linears themselves.
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/linalg.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

template <int N>
std::vector<OutputMeta> sibling_linears_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  INGOT_CHECK(x.dim() >= 1 && is_floating(x.dtype()), ShapeError,
              "[{}] input must be a floating tensor of at least 1 dimension, got {} {}", a.name(),
              x.dtype(), x.shape_string());
  std::vector<OutputMeta> out;
  for (int j = 0; j < N; ++j) {
    const Tensor& w = a.tensor(1 + j);
    INGOT_CHECK(w.dim() == 2 && w.dtype() == x.dtype(), DTypeError,
                "[{}] weight{} must be a 2-D {} tensor like the input, got {} {}", a.name(), j,
                x.dtype(), w.dtype(), w.shape_string());
    INGOT_CHECK(bool(x.sym_size(x.dim() - 1) == w.sym_size(1)), ShapeError,
                "[{}] input of shape {} does not match weight{} of shape {} (its dim 1)", a.name(),
                x.shape_string(), j, w.shape_string());
    Shape sizes(x.sym_sizes().begin(), x.sym_sizes().end() - 1);
    sizes.push_back(w.sym_size(0));
    out.push_back(OutputMeta{x.dtype(), sizes});
  }
  return out;
}

template <int N>
void sibling_linears_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor x = contiguous(a.tensor(0));  // [m, k] rows
  const int64_t k = x.size(x.dim() - 1);
  const int64_t m = k > 0 ? x.numel() / k : 0;
  std::vector<Tensor> weights;  // contiguous [n_j, k], kept alive for the call
  std::vector<Tensor> results;  // contiguous [..., n_j]; copied into out[j] when out[j] is not
  cpu::GemmArgs products[N];
  for (int j = 0; j < N; ++j) {
    weights.push_back(contiguous(a.tensor(1 + j)));
    const Tensor& w = weights.back();
    results.push_back(out[size_t(j)].is_contiguous()
                          ? out[size_t(j)]
                          : Tensor::empty(out[size_t(j)].sizes(), out[size_t(j)].dtype()));
    cpu::GemmArgs& g = products[j];
    g.m = m;
    g.n = w.size(0);
    g.k = k;
    g.a = {x.raw_data(), x.dtype(), k, 1};
    g.b = {w.raw_data(), w.dtype(), 1, k};  // B[k, n] = W[n, k]
    g.c = results.back().raw_data();
    g.c_dtype = results.back().dtype();
    g.ldc = g.n;
  }
  cpu::gemm_siblings(products);
  for (int j = 0; j < N; ++j)
    if (!out[size_t(j)].is_contiguous()) cpu::copy_cast(out[size_t(j)], results[size_t(j)]);
}

template <int N>
std::vector<Tensor> sibling_linears_decomposition(const OpArgs& a) {
  std::vector<Tensor> outs;
  for (int j = 0; j < N; ++j) outs.push_back(linear(a.tensor(0), a.tensor(1 + j)));
  return outs;
}

const OpRegistrar kLinear2(
    define_op("ingot::linear2(Tensor input, Tensor weight0, Tensor weight1) -> (Tensor out0, "
              "Tensor out1)")
        .shape(sibling_linears_shape<2>)
        .cpu(sibling_linears_kernel<2>)
        .decompose(sibling_linears_decomposition<2>));

const OpRegistrar kLinear3(
    define_op("ingot::linear3(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2) -> "
              "(Tensor out0, Tensor out1, Tensor out2)")
        .shape(sibling_linears_shape<3>)
        .cpu(sibling_linears_kernel<3>)
        .decompose(sibling_linears_decomposition<3>));

}  // namespace
}  // namespace ingot
