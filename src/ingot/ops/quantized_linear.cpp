// ingot::quantized_linear: a linear layer whose weight is packed int8 / int4 with
// per-group scales (functional/quantized.h). The kernel runs cpu::quantized_matmul on the
// packed bytes; the decomposition is dequantise (core ops) + linear, so a backend without
// a translation or kernel for it still runs the program, in float.
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {

namespace {

// in_features of a packed weight.
SymInt in_features(const Tensor& qweight, int64_t bits) {
  return bits == 4 ? qweight.sym_size(1) * 2 : qweight.sym_size(1);
}

void check_packed(std::string_view op, const Tensor& q, const Tensor& scales, const Tensor& zeros,
                  int64_t bits, int64_t group) {
  INGOT_CHECK(bits == 8 || bits == 4, ValueError, "[{}] bits must be 8 or 4, got {}", op, bits);
  INGOT_CHECK(q.dim() == 2 && q.dtype() == DType::U8, DTypeError,
              "[{}] qweight must be a 2-D uint8 tensor, got {} {}", op, q.dtype(),
              q.shape_string());
  INGOT_CHECK(scales.dim() == 2 && scales.dtype() == DType::F32, DTypeError,
              "[{}] scales must be a 2-D float32 tensor, got {} {}", op, scales.dtype(),
              scales.shape_string());
  const SymInt k = in_features(q, bits);
  INGOT_CHECK(group > 0 && bool(k % SymInt(group) == SymInt(0)), ValueError,
              "[{}] group_size {} must divide in_features {}", op, group, k.str());
  INGOT_CHECK(bits == 8 || group % 32 == 0, ValueError,
              "[{}] 4-bit weights need a group_size that is a multiple of 32, got {}", op, group);
  INGOT_CHECK(bool(scales.sym_size(0) == q.sym_size(0)) &&
                  bool(scales.sym_size(1) == floordiv(k, SymInt(group))),
              ShapeError, "[{}] scales of shape {} do not match qweight {} with group_size {}", op,
              scales.shape_string(), q.shape_string(), group);
  if (zeros.defined()) {
    INGOT_CHECK(zeros.dtype() == DType::U8 && zeros.dim() == 2 &&
                    bool(zeros.sym_size(0) == scales.sym_size(0)) &&
                    bool(zeros.sym_size(1) == scales.sym_size(1)),
                ShapeError, "[{}] zeros must be uint8 shaped like scales {}, got {} {}", op,
                scales.shape_string(), zeros.dtype(), zeros.shape_string());
  }
}

std::vector<OutputMeta> quantized_linear_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &q = a.tensor(1), &s = a.tensor(2);
  const Tensor z = a.optional_tensor(3), bias = a.optional_tensor(4);
  const int64_t bits = a.int_(5), group = a.int_(6);
  check_packed(a.name(), q, s, z, bits, group);
  INGOT_CHECK(is_floating(x.dtype()), DTypeError, "[{}] input must be floating, got {}", a.name(),
              x.dtype());
  INGOT_CHECK(x.dim() >= 1 && bool(x.sym_size(x.dim() - 1) == in_features(q, bits)), ShapeError,
              "[{}] input of shape {} does not match the weight's in_features {}", a.name(),
              x.shape_string(), in_features(q, bits).str());
  Shape out(x.sym_sizes().begin(), x.sym_sizes().end() - 1);
  out.push_back(q.sym_size(0));
  if (bias.defined()) {
    INGOT_CHECK(
        bias.dim() == 1 && bool(bias.sym_size(0) == q.sym_size(0)) && bias.dtype() == x.dtype(),
        ShapeError, "[{}] bias must be {} [{}], got {} {}", a.name(), x.dtype(),
        q.sym_size(0).str(), bias.dtype(), bias.shape_string());
  }
  return {OutputMeta{x.dtype(), out}};
}

// The packed weight (q, s, z) as the CPU kernels read it; `keep` holds contiguous copies
// where the tensors were not.
cpu::PackedWeight packed_weight(const Tensor& q, const Tensor& s, const Tensor& z, int64_t bits,
                                int64_t group, std::vector<Tensor>& keep) {
  keep.push_back(contiguous(q));
  keep.push_back(contiguous(s));
  keep.push_back(z.defined() ? contiguous(z) : Tensor());
  const Tensor &qc = keep[keep.size() - 3], &sc = keep[keep.size() - 2], &zc = keep.back();
  cpu::PackedWeight w;
  w.q = qc.data<uint8_t>();
  w.scales = sc.data<float>();
  w.zeros = zc.defined() ? zc.data<uint8_t>() : nullptr;
  w.bits = int(bits);
  w.n = q.size(0);
  w.k = w.bits == 4 ? q.size(1) * 2 : q.size(1);
  w.group = group;
  return w;
}

// Where the kernel writes output `out` as f32 rows [m, n]: the output itself, or a
// temporary that finish_output casts into it (16-bit or strided outputs).
Tensor f32_rows(const Tensor& out, int64_t m, int64_t n) {
  return out.dtype() == DType::F32 && out.is_contiguous() ? out : Tensor::empty({m, n}, DType::F32);
}
void finish_output(const Tensor& out, const Tensor& rows) {
  if (!rows.is_same(out))
    cpu::copy_cast(out, rows.as_strided(out.sizes(), contiguous_strides(out.sizes()), 0));
}

void quantized_linear_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor &x = a.tensor(0), bias = a.optional_tensor(4);
  std::vector<Tensor> keep;
  const cpu::PackedWeight w =
      packed_weight(a.tensor(1), a.tensor(2), a.optional_tensor(3), a.int_(5), a.int_(6), keep);
  // x as f32 rows [m, k]; y as f32 rows [m, n].
  const int64_t m = x.numel() / std::max<int64_t>(w.k, 1);
  Tensor xf = contiguous(x.dtype() == DType::F32 ? x : to(x, DType::F32));
  Tensor yf = f32_rows(out[0], m, w.n);
  cpu::quantized_matmul(xf.data<float>(), w.k, m, w, yf.data<float>(), w.n);
  if (bias.defined()) {
    const Tensor bf = contiguous(to(bias, DType::F32));
    float* y = yf.data<float>();
    const float* b = bf.data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < w.n; ++j) y[i * w.n + j] += b[j];
  }
  finish_output(out[0], yf);
}

std::vector<Tensor> quantized_linear_decomposition(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  Tensor w =
      dequantize_weight(a.tensor(1), a.tensor(2), a.optional_tensor(3), a.int_(5), a.int_(6));
  if (x.dtype() != DType::F32) w = to(w, x.dtype());
  return {linear(x, w, a.optional_tensor(4))};
}

const OpRegistrar kQuantizedLinear(
    define_op("ingot::quantized_linear(Tensor input, Tensor qweight, Tensor scales, Tensor? "
              "zeros=None, Tensor? bias=None, int bits=8, int group_size=0) -> Tensor")
        .shape(quantized_linear_shape)
        .cpu(quantized_linear_kernel)
        .decompose(quantized_linear_decomposition));

const OpHandle kQuantizedLinearOp("ingot::quantized_linear");

// ingot::quantized_linear{2,3}(input, qweight0, scales0, zeros0, ..., bits, group_size):
// N quantised linears without bias on the same input (the q / k / v projections, gate and
// up), one output each, computed in one pass of the thread pool
// (cpu::quantized_matmul_siblings). Only the runtime's own rewrite writes them
// (runtime/passes/fuse_sibling_linears.h); exported programs keep the separate linears. Weight j
// is args 1 + 3j .. 3 + 3j; all have zero points or none.
template <int N>
std::vector<OutputMeta> sibling_linears_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const int64_t bits = a.int_(1 + 3 * N), group = a.int_(2 + 3 * N);
  INGOT_CHECK(is_floating(x.dtype()), DTypeError, "[{}] input must be floating, got {}", a.name(),
              x.dtype());
  const bool zeros = a.optional_tensor(3).defined();
  std::vector<OutputMeta> out;
  for (int j = 0; j < N; ++j) {
    const Tensor &q = a.tensor(1 + 3 * j), &s = a.tensor(2 + 3 * j),
                 z = a.optional_tensor(3 + 3 * j);
    check_packed(a.name(), q, s, z, bits, group);
    INGOT_CHECK(z.defined() == zeros, ValueError, "[{}] weight {} {} zero points where weight 0 {}",
                a.name(), j, z.defined() ? "has" : "has no", zeros ? "has" : "has none");
    INGOT_CHECK(x.dim() >= 1 && bool(x.sym_size(x.dim() - 1) == in_features(q, bits)), ShapeError,
                "[{}] input of shape {} does not match weight {}'s in_features {}", a.name(),
                x.shape_string(), j, in_features(q, bits).str());
    Shape sizes(x.sym_sizes().begin(), x.sym_sizes().end() - 1);
    sizes.push_back(q.sym_size(0));
    out.push_back(OutputMeta{x.dtype(), sizes});
  }
  return out;
}

template <int N>
void sibling_linears_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor& x = a.tensor(0);
  const int64_t bits = a.int_(1 + 3 * N), group = a.int_(2 + 3 * N);
  std::vector<Tensor> keep;
  cpu::PackedWeight w[N];
  for (int j = 0; j < N; ++j)
    w[j] = packed_weight(a.tensor(1 + 3 * j), a.tensor(2 + 3 * j), a.optional_tensor(3 + 3 * j),
                         bits, group, keep);
  const int64_t m = x.numel() / std::max<int64_t>(w[0].k, 1);
  Tensor xf = contiguous(x.dtype() == DType::F32 ? x : to(x, DType::F32));
  Tensor yf[N];
  float* y[N];
  for (int j = 0; j < N; ++j) {
    yf[j] = f32_rows(out[size_t(j)], m, w[j].n);
    y[j] = yf[j].template data<float>();
  }
  cpu::quantized_matmul_siblings(xf.data<float>(), w[0].k, m, w, y);
  for (int j = 0; j < N; ++j) finish_output(out[size_t(j)], yf[j]);
}

template <int N>
std::vector<Tensor> sibling_linears_decomposition(const OpArgs& a) {
  std::vector<Tensor> outs;
  for (int j = 0; j < N; ++j)
    outs.push_back(kQuantizedLinearOp({a.tensor(0), a.tensor(1 + 3 * j), a.tensor(2 + 3 * j),
                                       a[size_t(3 + 3 * j)], Value(), a.int_(1 + 3 * N),
                                       a.int_(2 + 3 * N)})[0]);
  return outs;
}

const OpRegistrar kQuantizedLinear2(
    define_op("ingot::quantized_linear2(Tensor input, Tensor qweight0, Tensor scales0, Tensor? "
              "zeros0, Tensor qweight1, Tensor scales1, Tensor? zeros1, int bits, int "
              "group_size) -> (Tensor out0, Tensor out1)")
        .shape(sibling_linears_shape<2>)
        .cpu(sibling_linears_kernel<2>)
        .decompose(sibling_linears_decomposition<2>));

const OpRegistrar kQuantizedLinear3(
    define_op("ingot::quantized_linear3(Tensor input, Tensor qweight0, Tensor scales0, Tensor? "
              "zeros0, Tensor qweight1, Tensor scales1, Tensor? zeros1, Tensor qweight2, Tensor "
              "scales2, Tensor? zeros2, int bits, int group_size) -> (Tensor out0, Tensor out1, "
              "Tensor out2)")
        .shape(sibling_linears_shape<3>)
        .cpu(sibling_linears_kernel<3>)
        .decompose(sibling_linears_decomposition<3>));

}  // namespace

Tensor quantized_linear(const Tensor& input, const Tensor& qweight, const Tensor& scales,
                        const Tensor& zeros, const Tensor& bias, int64_t bits, int64_t group_size,
                        std::source_location where) {
  CallSiteScope call_site(where);
  return kQuantizedLinearOp({input, qweight, scales, zeros.defined() ? Value(zeros) : Value(),
                             bias.defined() ? Value(bias) : Value(), bits, group_size})[0];
}

PackedLinearWeight quantize_linear_weight(const Tensor& weight, int64_t bits, int64_t group_size,
                                          bool zero_point) {
  INGOT_CHECK(weight.dim() == 2 && is_floating(weight.dtype()), DTypeError,
              "[quantize_linear_weight] weight must be a 2-D float tensor, got {} {}",
              weight.dtype(), weight.shape_string());
  const Tensor w = contiguous(to(weight, DType::F32));
  const int64_t n = w.size(0), k = w.size(1);
  cpu::PackedBuffers b =
      cpu::quantize_weight(w.data<float>(), n, k, int(bits), group_size, zero_point);
  PackedLinearWeight out;
  out.qweight = Tensor::from_vector(b.q, {n, bits == 8 ? k : k / 2});
  out.scales = Tensor::from_vector(b.scales, {n, k / group_size});
  if (zero_point) out.zeros = Tensor::from_vector(b.zeros, {n, k / group_size});
  return out;
}

Tensor dequantize_weight(const Tensor& qweight, const Tensor& scales, const Tensor& zeros,
                         int64_t bits, int64_t group_size, std::source_location where) {
  CallSiteScope call_site(where);
  check_packed("dequantize_weight", qweight, scales, zeros, bits, group_size);
  const SymInt n = qweight.sym_size(0), k = in_features(qweight, bits);
  Tensor q = to(qweight, DType::I32);  // [n, bytes]
  if (bits == 4) {
    // byte = lo + 16 * hi: weight 2j is lo, 2j + 1 is hi.
    Tensor hi = div(q, full({}, 16, DType::I32), "floor");
    Tensor lo = sub(q, mul(hi, 16));
    q = reshape(stack({lo, hi}, -1), {n, k});  // [n, k]
  }
  // [n, groups, group] - z[n, groups, 1], times s[n, groups, 1].
  Tensor qg = reshape(to(q, DType::F32), {n, floordiv(k, SymInt(group_size)), SymInt(group_size)});
  Tensor centred = zeros.defined() ? sub(qg, unsqueeze(to(zeros, DType::F32), -1))
                                   : sub(qg, Scalar(double(1 << (bits - 1))));
  return reshape(mul(centred, unsqueeze(scales, -1)), {n, k});
}

}  // namespace ingot
