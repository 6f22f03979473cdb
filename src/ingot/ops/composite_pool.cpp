// 2-d pooling and nearest upsampling of torch's core ATen opset, composed from other ops
// (no kernel of their own; composite_shape.cpp says how composites run and export):
//  * avg_pool2d, max_pool2d_with_indices (and the training dialect's max_pool2d): the
//    input padded (0 / -inf), then one strided slice per kernel offset — kh * kw tensors
//    [N, C, OH, OW] — summed or reduced with amax / argmax. max's indices are flat
//    positions in the unpadded H x W plane, as torch's. ceil_mode=True is refused.
//  * _adaptive_avg_pool2d / adaptive_avg_pool2d: torch's windows [floor(i * in / out),
//    ceil((i + 1) * in / out)) as an averaging matrix per spatial dim, A_h @ x @ A_w^T.
//  * upsample_nearest2d with an output size: source index floor(i * in / out) (the .vec
//    overload is an adapter of the .pt2 reader).
// Inputs are [N, C, H, W] or [C, H, W].
#include <limits>

#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

const OpHandle kPad("constant_pad_nd"), kSlice("slice.Tensor"), kStack("stack"), kAmax("amax"),
    kArgmax("argmax"), kSumDim("sum.dim_IntList"), kDivS("div.Scalar"), kDivT("div.Tensor"),
    kFull("full"), kArange("arange.start_step"), kMulS("mul.Scalar"), kAddT("add.Tensor"),
    kAddS("add.Scalar"), kUnsqueeze("unsqueeze"), kDivMode("div.Tensor_mode"),
    kIndexSelect("index_select"), kGe("ge.Tensor"), kLt("lt.Tensor"), kLogicalAnd("logical_and"),
    kToCopy("_to_copy"), kSubT("sub.Tensor"), kMatmul("matmul"), kTranspose("transpose.int");

Tensor call1(const OpHandle& op, std::vector<Value> values) {
  return op(std::move(values)).at(0);
}

void check_spatial(const OpArgs& a, const Tensor& x) {
  INGOT_CHECK(x.dim() == 3 || x.dim() == 4, ShapeError,
              "[{}] 'self' must be [N, C, H, W] or [C, H, W], got {}", a.name(), x.shape_string());
}

// kernel_size, stride (empty: the kernel), padding, dilation of a pooling call.
struct Window {
  int64_t k[2], s[2], p[2], d[2];
};

Window window(const OpArgs& a, bool has_dilation) {
  auto pair = [&](size_t i, int64_t fallback0, int64_t fallback1, const char* what) {
    IntShape v = a.int_list(i);
    if (v.empty()) v = {fallback0, fallback1};
    if (v.size() == 1) v = {v[0], v[0]};
    INGOT_CHECK(v.size() == 2, ValueError, "[{}] {} must have 1 or 2 values, got {}", a.name(),
                what, v.size());
    return std::array<int64_t, 2>{v[0], v[1]};
  };
  Window w;
  const auto k = pair(1, 0, 0, "kernel_size");
  const auto s = pair(2, k[0], k[1], "stride");
  const auto p = pair(3, 0, 0, "padding");
  const auto d = has_dilation ? pair(4, 1, 1, "dilation") : std::array<int64_t, 2>{1, 1};
  for (int i = 0; i < 2; ++i) {
    w.k[i] = k[size_t(i)], w.s[i] = s[size_t(i)], w.p[i] = p[size_t(i)], w.d[i] = d[size_t(i)];
    INGOT_CHECK(w.k[i] > 0 && w.s[i] > 0 && w.d[i] > 0 && w.p[i] >= 0 && 2 * w.p[i] <= w.k[i],
                ValueError,
                "[{}] kernel {}x{}, stride {}x{}, dilation {}x{} must be positive and padding "
                "{}x{} at most half the kernel",
                a.name(), k[0], k[1], s[0], s[1], d[0], d[1], p[0], p[1]);
  }
  return w;
}

// Output size of spatial dim i (0: H, 1: W) for input size n.
SymInt pooled(const Window& w, int i, const SymInt& n) {
  return floordiv(n + 2 * w.p[i] - w.d[i] * (w.k[i] - 1) - 1, SymInt(w.s[i])) + 1;
}

std::vector<OutputMeta> pool_shape(const OpArgs& a, bool has_dilation, size_t ceil_at,
                                   int outputs) {
  const Tensor& x = a.tensor(0);
  check_spatial(a, x);
  const Window w = window(a, has_dilation);
  INGOT_CHECK(!a.boolean(ceil_at), NotSupportedError,
              "[{}] ceil_mode=True is not supported; export with ceil_mode=False", a.name());
  Shape s = x.sym_sizes();
  for (int i = 0; i < 2; ++i) {
    SymInt& n = s[size_t(x.dim() - 2 + i)];
    n = pooled(w, i, n);
  }
  std::vector<OutputMeta> out{{x.dtype(), s}};
  if (outputs == 2) out.push_back({DType::I64, s});
  return out;
}

// The kh * kw strided views of x padded by `fill`, stacked on a new dim 0.
Tensor windows(const Tensor& x, const Window& w, const Scalar& fill) {
  const int64_t h = x.dim() - 2;
  Tensor xp = x;
  if (w.p[0] || w.p[1]) xp = call1(kPad, {x, IntShape{w.p[1], w.p[1], w.p[0], w.p[0]}, fill});
  std::vector<SymInt> out;
  for (int i = 0; i < 2; ++i) out.push_back(pooled(w, i, x.sym_size(h + i)));
  TensorList views;
  for (int64_t di = 0; di < w.k[0]; ++di) {
    for (int64_t dj = 0; dj < w.k[1]; ++dj) {
      const int64_t r0 = di * w.d[0], c0 = dj * w.d[1];
      Tensor v = call1(kSlice, {xp, h, r0, Value(r0 + (out[0] - 1) * w.s[0] + 1), w.s[0]});
      v = call1(kSlice, {v, h + 1, c0, Value(c0 + (out[1] - 1) * w.s[1] + 1), w.s[1]});
      views.push_back(v);
    }
  }
  return call1(kStack, {views, int64_t(0)});
}

// --- avg_pool2d --------------------------------------------------------------------------

const OpRegistrar kAvgPool(
    define_op("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
              "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> "
              "Tensor")
        .shape([](const OpArgs& a) {
          INGOT_CHECK(is_floating(a.tensor(0).dtype()), DTypeError,
                      "[{}] 'self' must be floating, got {}", a.name(), a.tensor(0).dtype());
          return pool_shape(a, false, 4, 1);
        })
        .decompose([](const OpArgs& a) {
          const Tensor& x = a.tensor(0);
          const Window w = window(a, false);
          const Tensor sum =
              call1(kSumDim, {windows(x, w, Scalar(int64_t(0))), IntShape{0}, false});
          if (auto div = a.optional_int(6))
            return std::vector<Tensor>{call1(kDivS, {sum, Scalar(*div)})};
          if (a.boolean(5) || (w.p[0] == 0 && w.p[1] == 0))
            return std::vector<Tensor>{call1(kDivS, {sum, Scalar(w.k[0] * w.k[1])})};
          // Padding not counted: the number of real elements under each window.
          const Shape& s = x.sym_sizes();
          const Tensor ones = call1(
              kFull, {SymIntList{s[s.size() - 2], s[s.size() - 1]}, Scalar(int64_t(1)), x.dtype()});
          const Tensor count =
              call1(kSumDim, {windows(ones, w, Scalar(int64_t(0))), IntShape{0}, false});
          return std::vector<Tensor>{call1(kDivT, {sum, count})};
        }));

// --- max_pool2d_with_indices / max_pool2d ---------------------------------------------------

// (values, flat indices into the unpadded plane) of max pooling.
std::vector<Tensor> max_pool(const OpArgs& a, bool with_indices) {
  const Tensor& x = a.tensor(0);
  const Window w = window(a, true);
  const Scalar lowest = is_floating(x.dtype()) ? Scalar(-std::numeric_limits<double>::infinity())
                                               : Scalar(std::numeric_limits<int64_t>::lowest());
  const Tensor stacked = windows(x, w, lowest);
  const Tensor values = call1(kAmax, {stacked, IntShape{0}, false});
  if (!with_indices) return {values};
  // The window offset k of the max: (di, dj) = (k / kw, k % kw).
  const Tensor k = call1(kArgmax, {stacked, int64_t(0), false});
  const Tensor kw = call1(kFull, {SymIntList{}, Scalar(w.k[1]), DType::I64});
  const Tensor di = call1(kDivMode, {k, kw, std::string("floor")});
  const Tensor dj = call1(kSubT, {k, call1(kMulS, {di, Scalar(w.k[1])})});
  // Row r = oh * sh - ph + di * dh, column c = ow * sw - pw + dj * dw; index r * W + c.
  const int64_t h = x.dim() - 2;
  const SymInt oh = pooled(w, 0, x.sym_size(h)), ow = pooled(w, 1, x.sym_size(h + 1));
  const Tensor rows =
      call1(kUnsqueeze,
            {call1(kArange, {int64_t(-w.p[0]), Value(oh * w.s[0] - w.p[0]), w.s[0], DType::I64}),
             int64_t(1)});  // [OH, 1]
  const Tensor cols =
      call1(kArange, {int64_t(-w.p[1]), Value(ow * w.s[1] - w.p[1]), w.s[1], DType::I64});
  const Tensor r = call1(kAddT, {call1(kMulS, {di, Scalar(w.d[0])}), rows});
  const Tensor c = call1(kAddT, {call1(kMulS, {dj, Scalar(w.d[1])}), cols});
  const Tensor index = call1(kAddT, {call1(kMulS, {r, Value(x.sym_size(h + 1))}), c});
  return {values, index};
}

const OpRegistrar kMaxPoolIndices(
    define_op("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
              "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)")
        .shape([](const OpArgs& a) { return pool_shape(a, true, 5, 2); })
        .decompose([](const OpArgs& a) { return max_pool(a, true); }));
const OpRegistrar kMaxPool(
    define_op("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
              "int[2] dilation=1, bool ceil_mode=False) -> Tensor")
        .shape([](const OpArgs& a) { return pool_shape(a, true, 5, 1); })
        .decompose([](const OpArgs& a) { return max_pool(a, false); }));

// --- adaptive average pooling ---------------------------------------------------------------

// [out, in]: row i averages torch's window [floor(i * in / out), ceil((i + 1) * in / out)).
Tensor averaging_matrix(const SymInt& in, const SymInt& out, DType dtype) {
  const Tensor i = call1(kArange, {int64_t(0), Value(out), int64_t(1), DType::I64});
  const Tensor n_out = call1(kFull, {SymIntList{}, Value(out), DType::I64});
  const Tensor start = call1(kDivMode, {call1(kMulS, {i, Value(in)}), n_out, std::string("floor")});
  // ceil(a / b) = floor((a + b - 1) / b)
  const Tensor end = call1(
      kDivMode, {call1(kAddS, {call1(kMulS, {call1(kAddS, {i, Scalar(int64_t(1))}), Value(in)}),
                               Value(out - 1)}),
                 n_out, std::string("floor")});
  const Tensor j = call1(kArange, {int64_t(0), Value(in), int64_t(1), DType::I64});
  const Tensor s1 = call1(kUnsqueeze, {start, int64_t(1)}),
               e1 = call1(kUnsqueeze, {end, int64_t(1)});
  const Tensor inside = call1(kLogicalAnd, {call1(kGe, {j, s1}), call1(kLt, {j, e1})});
  const Tensor len = call1(kToCopy, {call1(kSubT, {e1, s1}), dtype});
  return call1(kDivT, {call1(kToCopy, {inside, dtype}), len});
}

std::vector<OutputMeta> adaptive_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  check_spatial(a, x);
  INGOT_CHECK(is_floating(x.dtype()), DTypeError, "[{}] 'self' must be floating, got {}", a.name(),
              x.dtype());
  const SymIntList& size = a.sym_int_list(1);
  INGOT_CHECK(size.size() == 2, ValueError, "[{}] output_size must have 2 values, got {}", a.name(),
              size.size());
  Shape s = x.sym_sizes();
  s[s.size() - 2] = size[0];
  s[s.size() - 1] = size[1];
  return {{x.dtype(), s}};
}

std::vector<Tensor> adaptive_avg(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  const SymIntList& size = a.sym_int_list(1);
  const int64_t h = x.dim() - 2;
  const Tensor ah = averaging_matrix(x.sym_size(h), size[0], x.dtype());          // [OH, H]
  const Tensor aw = averaging_matrix(x.sym_size(h + 1), size[1], x.dtype());      // [OW, W]
  const Tensor y = call1(kMatmul, {ah, x});                                       // [.., OH, W]
  return {call1(kMatmul, {y, call1(kTranspose, {aw, int64_t(0), int64_t(1)})})};  // [.., OH, OW]
}

const OpRegistrar kAdaptiveAvg(
    define_op("_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
        .shape(adaptive_shape)
        .decompose(adaptive_avg));
const OpRegistrar kAdaptiveAvgPublic(
    define_op("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor")
        .shape(adaptive_shape)
        .decompose(adaptive_avg));

// --- upsample_nearest2d with an output size -----------------------------------------------

std::vector<OutputMeta> nearest_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  check_spatial(a, x);
  const SymIntList& size = a.sym_int_list(1);
  INGOT_CHECK(size.size() == 2, ValueError, "[{}] output_size must have 2 values, got {}", a.name(),
              size.size());
  Shape s = x.sym_sizes();
  s[s.size() - 2] = size[0];
  s[s.size() - 1] = size[1];
  return {{x.dtype(), s}};
}

std::vector<Tensor> nearest(const OpArgs& a) {
  Tensor x = a.tensor(0);
  const SymIntList& size = a.sym_int_list(1);
  const int64_t h = x.dim() - 2;
  for (int i = 0; i < 2; ++i) {
    const SymInt in = x.sym_size(h + i);
    // torch: src = floor(dst * in / out), computed here in integers.
    const Tensor dst = call1(kArange, {int64_t(0), Value(size[size_t(i)]), int64_t(1), DType::I64});
    const Tensor n_out = call1(kFull, {SymIntList{}, Value(size[size_t(i)]), DType::I64});
    const Tensor src =
        call1(kDivMode, {call1(kMulS, {dst, Value(in)}), n_out, std::string("floor")});
    x = call1(kIndexSelect, {x, h + i, src});
  }
  return {x};
}

const OpRegistrar kNearest(
    define_op("upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
              "float? scales_w=None) -> Tensor")
        .shape(nearest_shape)
        .decompose(nearest));

}  // namespace
}  // namespace ingot
