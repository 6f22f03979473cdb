// convolution: aten::convolution without transposition or output padding, over 1 or 2
// spatial dims (the weight's rank says which). A direct reference kernel: every output
// element sums C / groups * kernel products in the op-math type (float for 16-bit inputs,
// double for float64), bias first. A 1-D convolution is computed as a 2-D one over a unit
// height.
//
//   input  [N, C, *in]     weight [O, C / groups, *k]     bias [O]?
//   output [N, O, *out]    out = (in + 2 p - d (k - 1) - 1) / s + 1   (floor)
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/conv.h"
#include "ingot/ops/functional/views.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

// The spatial parameter `p` of length 1 (applied to every dim) or `dims`.
std::vector<int64_t> per_dim(const OpArgs& a, size_t i, size_t dims, const char* what) {
  std::vector<int64_t> v = a.int_list(i);
  INGOT_CHECK(v.size() == 1 || v.size() == dims, ValueError,
              "[{}] {} must have 1 or {} elements, got {}", a.name(), what, dims, v.size());
  if (v.size() == 1) v.assign(dims, v[0]);
  return v;
}

std::vector<OutputMeta> convolution_shape(const OpArgs& a) {
  const Tensor &x = a.tensor(0), &w = a.tensor(1);
  const Tensor bias = a.optional_tensor(2);
  check_floating(x, a.name(), "input");
  INGOT_CHECK(w.dtype() == x.dtype(), DTypeError, "[{}] input is {} but weight is {}", a.name(),
              x.dtype(), w.dtype());
  INGOT_CHECK(w.dim() == 3 || w.dim() == 4, ShapeError,
              "[{}] weight must be [O, C / groups, k] (1-D) or [O, C / groups, kh, kw] (2-D), "
              "got shape {}",
              a.name(), w.shape_string());
  INGOT_CHECK(x.dim() == w.dim(), ShapeError,
              "[{}] input {} must have the weight's rank {} ([N, C, *spatial])", a.name(),
              x.shape_string(), w.dim());
  const size_t dims = size_t(w.dim() - 2);
  const int64_t groups = a.int_(6);
  const auto stride = per_dim(a, 3, dims, "stride"), padding = per_dim(a, 4, dims, "padding"),
             dilation = per_dim(a, 5, dims, "dilation");
  INGOT_CHECK(groups >= 1 && w.size(0) % groups == 0, ValueError,
              "[{}] groups {} must be >= 1 and divide the {} output channels", a.name(), groups,
              w.size(0));
  INGOT_CHECK(bool(x.sym_size(1) == SymInt(w.size(1) * groups)), ShapeError,
              "[{}] input {} has {} channels; weight {} with groups {} expects {}", a.name(),
              x.shape_string(), x.sym_size(1).str(), w.shape_string(), groups,
              w.size(1) * groups);
  if (bias.defined())
    INGOT_CHECK(bias.dim() == 1 && bias.size(0) == w.size(0) && bias.dtype() == x.dtype(),
                ShapeError, "[{}] bias must be [{}] {}, got {} {}", a.name(), w.size(0),
                x.dtype(), bias.shape_string(), bias.dtype());
  Shape out{x.sym_size(0), SymInt(w.size(0))};
  for (size_t d = 0; d < dims; ++d) {
    INGOT_CHECK(stride[d] >= 1 && padding[d] >= 0 && dilation[d] >= 1, ValueError,
                "[{}] stride and dilation must be >= 1 and padding >= 0", a.name());
    const int64_t span = dilation[d] * (w.size(2 + int64_t(d)) - 1) + 1;
    const SymInt in = x.sym_size(2 + int64_t(d)) + SymInt(2 * padding[d]);
    INGOT_CHECK(bool(in >= SymInt(span)), ShapeError,
                "[{}] padded input {} is smaller than the dilated kernel ({}) in spatial dim {}",
                a.name(), x.shape_string(), span, d);
    out.push_back(floordiv(in - SymInt(span), SymInt(stride[d])) + SymInt(1));
  }
  return {{x.dtype(), out}};
}

void convolution_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor x = contiguous(a.tensor(0)), w = contiguous(a.tensor(1));
  const Tensor bias_in = a.optional_tensor(2);
  const Tensor bias = bias_in.defined() ? contiguous(bias_in) : Tensor();
  const bool one_d = w.dim() == 3;
  const size_t dims = one_d ? 1 : 2;
  const auto s = per_dim(a, 3, dims, "stride"), p = per_dim(a, 4, dims, "padding"),
             d = per_dim(a, 5, dims, "dilation");
  const int64_t groups = a.int_(6);
  // As 2-D: [N, C, H, W], unit height and no vertical stride / padding for 1-D.
  const int64_t n = x.size(0), c = x.size(1), h = one_d ? 1 : x.size(2), wd = x.size(-1);
  const int64_t o = w.size(0), cg = w.size(1), kh = one_d ? 1 : w.size(2), kw = w.size(-1);
  const int64_t sh = one_d ? 1 : s[0], sw = s.back(), ph = one_d ? 0 : p[0], pw = p.back();
  const int64_t dh = one_d ? 1 : d[0], dw = d.back();
  const int64_t oh = one_d ? 1 : out[0].size(2), ow = out[0].size(-1), og = o / groups;
  Tensor result = out[0].is_contiguous() ? out[0] : Tensor::empty(out[0].sizes(), out[0].dtype());
  INGOT_DISPATCH_FLOATING_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = x.data<T>();
    const T* wt = w.data<T>();
    const T* b = bias.defined() ? bias.data<T>() : nullptr;
    T* dst = result.data<T>();
    for (int64_t in = 0; in < n; ++in)
      for (int64_t oc = 0; oc < o; ++oc) {
        const int64_t g = oc / og;
        const T* filter = wt + oc * cg * kh * kw;
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xo = 0; xo < ow; ++xo) {
            M acc = b ? M(b[oc]) : M(0);
            for (int64_t ic = 0; ic < cg; ++ic) {
              const T* plane = src + ((in * c) + g * cg + ic) * h * wd;
              for (int64_t i = 0; i < kh; ++i) {
                const int64_t yi = y * sh - ph + i * dh;
                if (yi < 0 || yi >= h) continue;
                for (int64_t j = 0; j < kw; ++j) {
                  const int64_t xi = xo * sw - pw + j * dw;
                  if (xi < 0 || xi >= wd) continue;
                  acc += M(plane[yi * wd + xi]) * M(filter[(ic * kh + i) * kw + j]);
                }
              }
            }
            dst[((in * o + oc) * oh + y) * ow + xo] = T(acc);
          }
      }
  });
  if (!result.is_same(out[0])) cpu::copy_cast(out[0], result);
}

const OpRegistrar kConvolution(
    define_op("convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, "
              "int[] padding, int[] dilation, int groups) -> Tensor")
        .shape(convolution_shape)
        .cpu(convolution_kernel));

const OpHandle kConvolutionOp("convolution");

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                   const std::vector<int64_t>& dilation, int64_t groups,
                   std::source_location where) {
  CallSiteScope call_site(where);
  return kConvolutionOp({input, weight, bias.defined() ? Value(bias) : Value(), IntShape(stride),
                         IntShape(padding), IntShape(dilation), groups})[0];
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride,
              int64_t padding, int64_t dilation, int64_t groups, std::source_location where) {
  return convolution(input, weight, bias, {stride}, {padding}, {dilation}, groups, where);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              std::vector<int64_t> stride, std::vector<int64_t> padding,
              std::vector<int64_t> dilation, int64_t groups, std::source_location where) {
  return convolution(input, weight, bias, stride, padding, dilation, groups, where);
}

}  // namespace ingot
