#include "ingot/exporters/executorch/xnnpack_delegate.h"

#include "ingot/exporters/executorch/xnnpack_payload.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::executorch::xnnpack {

namespace {

constexpr const char* kBackendId = "XnnpackBackend";  // the id the runtime registers

bool is_f32_tensor(KernelContext& k, size_t i) {
  return !k.is_none(i) && k.in_info(i).is_tensor() && k.in_info(i).dtype == DType::F32;
}

// linear(x [..., k], W [n, k], b [n]?) -> XNNFullyConnected.
bool lower_linear(KernelContext& k) {
  if (!is_f32_tensor(k, 0) || !is_f32_tensor(k, 1) || k.out_info().dtype != DType::F32)
    return false;
  const Tensor* w = k.constant(1);
  if (w == nullptr || w->dim() != 2) return false;
  const bool has_bias = k.num_args() > 2 && !k.is_none(2);
  const Tensor* b = has_bias ? k.constant(2) : nullptr;
  if (has_bias && (b == nullptr || b->dtype() != DType::F32 || b->dim() != 1)) return false;
  if (k.in_info(0).sizes.size() < 1) return false;

  const int32_t x = k.tensor(0), y = k.out();
  GraphBuilder g;
  const uint32_t in = g.external_input(k.bound_sizes(x));
  const uint32_t filter = g.constant(*w);
  const uint32_t bias = g.constant(b ? *b : zeros({w->size(0)}, DType::F32));
  const uint32_t out = g.external_output(k.bound_sizes(y));
  g.fully_connected(in, filter, bias, out);
  k.delegate_call(kBackendId, g.finish(), {x, y});
  return true;
}

// mm(a [m, k], b [k, n]) / bmm(a [B, m, k], b [B, k, n]) -> XNNBatchMatrixMultiply.
bool lower_matmul(KernelContext& k) {
  if (!is_f32_tensor(k, 0) || !is_f32_tensor(k, 1) || k.out_info().dtype != DType::F32)
    return false;
  GraphBuilder g;
  std::vector<int32_t> args;
  uint32_t operand[2];
  for (size_t i = 0; i < 2; ++i) {
    if (const Tensor* c = k.constant(i)) {
      operand[i] = g.constant(*c);
    } else {
      const int32_t v = k.tensor(i);
      operand[i] = g.external_input(k.bound_sizes(v));
      args.push_back(v);
    }
  }
  if (args.empty()) return false;  // both constant: leave it to the kernel
  const int32_t y = k.out();
  const uint32_t out = g.external_output(k.bound_sizes(y));
  g.batch_matrix_multiply(operand[0], operand[1], out);
  args.push_back(y);
  k.delegate_call(kBackendId, g.finish(), args);
  return true;
}

}  // namespace

bool lower_to_delegate(KernelContext& k) {
  const std::string& op = k.node().target;
  if (op == "linear") return lower_linear(k);
  if (op == "mm" || op == "bmm") return lower_matmul(k);
  return false;
}

}  // namespace ingot::exporters::executorch::xnnpack
