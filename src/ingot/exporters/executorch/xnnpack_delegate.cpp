#include "ingot/exporters/executorch/xnnpack_delegate.h"

#include <cmath>
#include <limits>
#include <optional>

#include "ingot/exporters/executorch/xnnpack_partition.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::executorch::xnnpack {

namespace {

constexpr size_t kMaxRank = 6;  // XNN_MAX_TENSOR_DIMS
constexpr float kInf = std::numeric_limits<float>::infinity();

const ir::Argument& arg(KernelContext& k, size_t i) {
  return k.node().args.at(i);
}

// Tensor argument i is float32 with a rank XNNPACK takes (a non-constant one >= 1-D:
// the runtime reshapes external values by their dims).
bool f32_arg(KernelContext& k, size_t i) {
  if (k.is_none(i) || !std::holds_alternative<ir::TensorRef>(arg(k, i))) return false;
  const ir::ValueInfo& v = k.in_info(i);
  if (!v.is_tensor() || v.dtype != DType::F32 || v.sizes.size() > kMaxRank) return false;
  return !v.sizes.empty() || k.constant(i) != nullptr;
}

bool f32_out(KernelContext& k) {
  if (k.node().outputs.size() != 1) return false;
  const ir::ValueInfo& v = k.out_info();
  return v.is_tensor() && v.dtype == DType::F32 && !v.sizes.empty() && v.sizes.size() <= kMaxRank;
}

// A constant float32 tensor argument of rank `rank` (any rank when < 0).
const Tensor* f32_constant(KernelContext& k, size_t i, int64_t rank) {
  if (k.is_none(i)) return nullptr;
  const Tensor* t = k.constant(i);
  if (t == nullptr || t->dtype() != DType::F32 || (rank >= 0 && t->dim() != rank)) return nullptr;
  return t;
}

std::optional<int64_t> concrete_int(const ir::Argument& a) {
  if (const auto* e = std::get_if<sym::Expr>(&a); e && e->is_integer()) return e->value();
  if (const auto* s = std::get_if<Scalar>(&a); s && s->is_integral()) return s->to_int();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> concrete_ints(const ir::Argument& a) {
  const auto* l = std::get_if<std::vector<sym::Expr>>(&a);
  if (l == nullptr) return std::nullopt;
  std::vector<int64_t> v;
  for (const sym::Expr& e : *l) {
    if (!e.is_integer()) return std::nullopt;
    v.push_back(e.value());
  }
  return v;
}

// A concrete (not symbolic) Scalar argument.
std::optional<double> scalar_arg(KernelContext& k, size_t i) {
  if (const auto* s = std::get_if<Scalar>(&arg(k, i)); s && !s->is_bool()) return s->to_double();
  return std::nullopt;
}

// --- anchors -------------------------------------------------------------------------------

// linear(x [..., k], W [n, k], b [n]?) -> XNNFullyConnected.
bool lower_linear(KernelContext& k, Partition& p) {
  if (!f32_arg(k, 0) || k.constant(0) != nullptr || !f32_out(k)) return false;
  const Tensor* w = f32_constant(k, 1, 2);
  if (w == nullptr) return false;
  const bool has_bias = k.num_args() > 2 && !k.is_none(2);
  if (has_bias && f32_constant(k, 2, 1) == nullptr) return false;
  GraphBuilder& g = p.graph();
  const uint32_t in = p.operand(k, 0);
  const uint32_t filter = p.operand(k, 1);
  const uint32_t bias = has_bias ? p.operand(k, 2) : g.constant(zeros({w->size(0)}, DType::F32));
  g.fully_connected(in, filter, bias, p.result(k));
  return true;
}

// mm(a [m, k], b [k, n]) / bmm(a [B, m, k], b [B, k, n]) -> XNNBatchMatrixMultiply.
bool lower_matmul(KernelContext& k, Partition& p) {
  if (!f32_arg(k, 0) || !f32_arg(k, 1) || !f32_out(k)) return false;
  if (k.constant(0) != nullptr && k.constant(1) != nullptr) return false;  // folded by the kernel
  const uint32_t a = p.operand(k, 0), b = p.operand(k, 1);
  p.graph().batch_matrix_multiply(a, b, p.result(k));
  return true;
}

uint32_t dim_or_inferred(const sym::Expr& size, int64_t bound) {
  return size.is_integer() ? uint32_t(bound) : 0u;  // 0: XNNPACK infers it
}

// convolution(x, W, b?, stride, padding, dilation, groups) -> [transposes / reshapes
// around] XNNConv2d / XNNDepthwiseConv2d in NHWC.
bool lower_convolution(KernelContext& k, Partition& p) {
  if (!f32_arg(k, 0) || k.constant(0) != nullptr || !f32_out(k)) return false;
  const Tensor* w = f32_constant(k, 1, -1);
  if (w == nullptr || (w->dim() != 3 && w->dim() != 4)) return false;
  const bool one_d = w->dim() == 3;
  const bool has_bias = !k.is_none(2);
  if (has_bias && f32_constant(k, 2, 1) == nullptr) return false;
  const auto stride = concrete_ints(arg(k, 3)), padding = concrete_ints(arg(k, 4)),
             dilation = concrete_ints(arg(k, 5));
  const auto groups = concrete_int(arg(k, 6));
  if (!stride || !padding || !dilation || !groups) return false;
  const size_t dims = one_d ? 1 : 2;
  auto spatial = [&](const std::vector<int64_t>& v, size_t d) {
    return uint32_t(v.size() == 1 ? v[0] : v.at(d));
  };
  for (const auto* v : {&*stride, &*padding, &*dilation})
    if (v->size() != 1 && v->size() != dims) return false;
  const std::vector<sym::Expr>& in_sizes = k.in_info(0).sizes;
  const std::vector<sym::Expr>& out_sizes = k.out_info().sizes;
  if (!in_sizes.at(1).is_integer()) return false;  // XNNPACK needs the channel count
  if (one_d && !in_sizes[0].is_integer() && !in_sizes[2].is_integer()) return false;

  const int64_t o = w->size(0), cg = w->size(1), g = *groups;
  const bool depthwise = cg == 1;  // as ExecuTorch's partitioner: one input channel per group
  Conv2dParams c;
  c.kernel_h = one_d ? 1 : uint32_t(w->size(2));
  c.kernel_w = uint32_t(w->size(-1));
  c.stride_h = one_d ? 1 : spatial(*stride, 0);
  c.stride_w = spatial(*stride, dims - 1);
  c.padding_h = one_d ? 0 : spatial(*padding, 0);
  c.padding_w = spatial(*padding, dims - 1);
  c.dilation_h = one_d ? 1 : spatial(*dilation, 0);
  c.dilation_w = spatial(*dilation, dims - 1);
  c.groups = uint32_t(g);
  c.group_input_channels = uint32_t(cg);
  c.group_output_channels = uint32_t(o / g);
  // The filter in XNNPACK's layout: [O, kh, kw, C/g], depthwise [1, kh, kw, O].
  const Tensor w4 = one_d ? unsqueeze(*w, 2) : *w;  // [O, C/g, kh, kw]
  const Tensor filter_data =
      contiguous(permute(w4, depthwise ? std::vector<int64_t>{1, 2, 3, 0}
                                       : std::vector<int64_t>{0, 2, 3, 1}));

  GraphBuilder& b = p.graph();
  const uint32_t x = p.operand(k, 0);
  const std::vector<int64_t> xd = b.dims(x);  // [N, C, H, W] / [N, C, L]
  const uint32_t filter = b.constant(filter_data);
  const uint32_t bias = has_bias ? p.operand(k, 2) : kInvalidValueId;
  const uint32_t y = p.result(k);
  const std::vector<int64_t> yd = b.dims(y);  // [N, O, OH, OW] / [N, O, L']
  if (!one_d) {
    const uint32_t xt = b.internal({xd[0], xd[2], xd[3], xd[1]});
    b.transpose(x, {0, 2, 3, 1}, xt);
    const uint32_t yt = b.internal({yd[0], yd[2], yd[3], yd[1]});
    b.conv2d(depthwise, c, xt, filter, bias, yt);
    b.transpose(yt, {0, 3, 1, 2}, y);
    return true;
  }
  const uint32_t xt = b.internal({xd[0], xd[2], xd[1]});  // [N, L, C]
  b.transpose(x, {0, 2, 1}, xt);
  const uint32_t x4 = b.internal({xd[0], 1, xd[2], xd[1]});  // [N, 1, L, C]
  b.reshape(xt,
            {dim_or_inferred(in_sizes[0], xd[0]), 1u, dim_or_inferred(in_sizes[2], xd[2]),
             uint32_t(xd[1])},
            x4);
  const uint32_t y4 = b.internal({yd[0], 1, yd[2], yd[1]});  // [N, 1, L', O]
  b.conv2d(depthwise, c, x4, filter, bias, y4);
  const uint32_t y3 = b.internal({yd[0], yd[2], yd[1]});  // [N, L', O]
  b.reshape(y4,
            {dim_or_inferred(out_sizes[0], yd[0]), dim_or_inferred(out_sizes[2], yd[2]),
             uint32_t(yd[1])},
            y3);
  b.transpose(y3, {0, 2, 1}, y);
  return true;
}

// --- elementwise (join an open partition) ------------------------------------------------

// a (op) b over two tensors; add / sub only with alpha 1.
// Both operands are non-constant: a binary node with a static operand (a constant tensor
// or a Scalar) crashes ExecuTorch 1.5.1's XNNPACK runtime at execute (segfault, measured
// on mul / sub / div by a scalar), so those stay portable.
bool lower_binary(KernelContext& k, Partition& p, NodeType op, bool has_alpha) {
  if (!f32_arg(k, 0) || !f32_arg(k, 1) || !f32_out(k)) return false;
  if (k.constant(0) != nullptr || k.constant(1) != nullptr) return false;
  if (has_alpha && k.num_args() > 2 && !k.is_none(2)) {
    const auto alpha = scalar_arg(k, 2);
    if (!alpha || *alpha != 1.0) return false;
  }
  const uint32_t a = p.operand(k, 0), b = p.operand(k, 1);
  p.graph().binary(op, a, b, p.result(k));
  return true;
}

bool lower_unary(KernelContext& k, Partition& p, NodeType op) {
  if (!f32_arg(k, 0) || k.constant(0) != nullptr || !f32_out(k)) return false;
  const uint32_t x = p.operand(k, 0);
  p.graph().unary(op, x, p.result(k));
  return true;
}

bool lower_clamp(KernelContext& k, Partition& p, float lo, float hi) {
  if (!f32_arg(k, 0) || k.constant(0) != nullptr || !f32_out(k)) return false;
  const uint32_t x = p.operand(k, 0);
  p.graph().clamp(x, lo, hi, p.result(k));
  return true;
}

// clamp(x, min?, max?) with concrete bounds.
bool lower_clamp_scalars(KernelContext& k, Partition& p) {
  float lo = -kInf, hi = kInf;
  if (!k.is_none(1)) {
    const auto v = scalar_arg(k, 1);
    if (!v) return false;
    lo = float(*v);
  }
  if (k.num_args() > 2 && !k.is_none(2)) {
    const auto v = scalar_arg(k, 2);
    if (!v) return false;
    hi = float(*v);
  }
  if (!(lo <= hi)) return false;  // torch's clamp with min > max: every element is max
  return lower_clamp(k, p, lo, hi);
}

// silu(x) = x * sigmoid(x).
bool lower_silu(KernelContext& k, Partition& p) {
  if (!f32_arg(k, 0) || k.constant(0) != nullptr || !f32_out(k)) return false;
  GraphBuilder& g = p.graph();
  const uint32_t x = p.operand(k, 0);
  const uint32_t s = g.internal(g.dims(x));
  g.unary(NodeType::Sigmoid, x, s);
  g.binary(NodeType::Multiply, x, s, p.result(k));
  return true;
}

// ingot::silu_mul(gate, up) = gate * sigmoid(gate) * up.
bool lower_silu_mul(KernelContext& k, Partition& p) {
  if (!f32_arg(k, 0) || !f32_arg(k, 1) || k.constant(0) != nullptr || !f32_out(k)) return false;
  GraphBuilder& g = p.graph();
  const uint32_t gate = p.operand(k, 0), up = p.operand(k, 1);
  const uint32_t s = g.internal(g.dims(gate)), silu = g.internal(g.dims(gate));
  g.unary(NodeType::Sigmoid, gate, s);
  g.binary(NodeType::Multiply, gate, s, silu);
  g.binary(NodeType::Multiply, silu, up, p.result(k));
  return true;
}

bool lower_gelu(KernelContext& k, Partition& p) {
  if (k.num_args() > 1 && !k.is_none(1)) {
    const auto* mode = std::get_if<std::string>(&arg(k, 1));
    if (mode == nullptr || *mode != "none") return false;  // tanh approximation: portable
  }
  return lower_unary(k, p, NodeType::Gelu);
}

// softmax over the last dim (XNNPACK's softmax normalises the innermost dim).
bool lower_softmax(KernelContext& k, Partition& p, bool aten_internal) {
  if (!f32_arg(k, 0)) return false;
  const auto dim = concrete_int(arg(k, 1));
  const int64_t rank = int64_t(k.in_info(0).sizes.size());
  if (!dim || (*dim != rank - 1 && *dim != -1)) return false;
  if (aten_internal) {  // _softmax(self, dim, half_to_float)
    const auto* h = std::get_if<bool>(&arg(k, 2));
    if (h == nullptr || *h) return false;
  } else if (k.num_args() > 2 && !k.is_none(2)) {  // softmax.int(self, dim, dtype?)
    const auto* d = std::get_if<DType>(&arg(k, 2));
    if (d == nullptr || *d != DType::F32) return false;
  }
  return lower_unary(k, p, NodeType::Softmax);
}

}  // namespace

bool is_anchor(const std::string& op) {
  return op == "linear" || op == "mm" || op == "bmm" || op == "convolution";
}

bool lower_node(KernelContext& k, Partition& p) {
  const std::string& op = k.node().target;
  if (op == "linear") return lower_linear(k, p);
  if (op == "mm" || op == "bmm") return lower_matmul(k, p);
  if (op == "convolution") return lower_convolution(k, p);
  if (op == "add.Tensor") return lower_binary(k, p, NodeType::Add, true);
  if (op == "sub.Tensor") return lower_binary(k, p, NodeType::Subtract, true);
  if (op == "mul.Tensor") return lower_binary(k, p, NodeType::Multiply, false);
  if (op == "div.Tensor") return lower_binary(k, p, NodeType::Div, false);
  if (op == "relu") return lower_clamp(k, p, 0.0f, kInf);
  if (op == "clamp") return lower_clamp_scalars(k, p);
  if (op == "sigmoid") return lower_unary(k, p, NodeType::Sigmoid);
  if (op == "tanh") return lower_unary(k, p, NodeType::Tanh);
  if (op == "neg") return lower_unary(k, p, NodeType::Negate);
  if (op == "gelu") return lower_gelu(k, p);
  if (op == "silu") return lower_silu(k, p);
  if (op == "ingot::silu_mul") return lower_silu_mul(k, p);
  if (op == "_softmax") return lower_softmax(k, p, true);
  if (op == "softmax.int") return lower_softmax(k, p, false);
  return false;
}

}  // namespace ingot::exporters::executorch::xnnpack
