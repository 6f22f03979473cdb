// upsample_bilinear2d: bilinear resampling of the last two dims of [N, C, H, W] to
// output_size, ATen semantics (torch.nn.functional.interpolate(mode="bilinear")).
//
// Source coordinate of output index d along a dim of input size `in` and output `out`:
//   align_corners: d * (in - 1) / (out - 1)   (0 when out == 1): corners map to corners
//   otherwise:     max(0, (d + 0.5) * scale - 0.5), scale = 1 / scales_x if given, else
//                  in / out
// The value interpolates the two neighbouring input samples (the upper one clamped to
// the edge) with weights computed in float (double for float64), as ATen's CPU kernel.
#include <cmath>

#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/upsample.h"
#include "ingot/ops/functional/views.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

std::vector<OutputMeta> upsample_shape(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  INGOT_CHECK(is_floating(self.dtype()), DTypeError,
              "[{}] input must be floating (float16, bfloat16, float32, float64), got {}", a.name(),
              self.dtype());
  INGOT_CHECK(self.dim() == 4, ShapeError, "[{}] input must be 4-D [N, C, H, W], got shape {}",
              a.name(), self.shape_string());
  const SymIntList& size = a.sym_int_list(1);
  INGOT_CHECK(size.size() == 2, ValueError, "[{}] output_size must have 2 elements, got {}",
              a.name(), size.size());
  for (int i = 0; i < 2; ++i) {
    INGOT_CHECK(bool(size[i] > SymInt(0)) && bool(self.sym_size(2 + i) > SymInt(0)), ValueError,
                "[{}] input {} and output_size [{}, {}] must be non-empty", a.name(),
                self.shape_string(), size[0].str(), size[1].str());
  }
  return {{self.dtype(), {self.sym_size(0), self.sym_size(1), size[0], size[1]}}};
}

// Per output index along one dim: the two source indices and the weight of the upper one.
template <typename M>
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<M> w_hi;
};

template <typename M>
Taps<M> taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale_factor) {
  M scale;
  if (align_corners)
    scale = out > 1 ? M(in - 1) / M(out - 1) : M(0);
  else
    scale = scale_factor && *scale_factor > 0 ? M(1.0 / *scale_factor) : M(in) / M(out);
  Taps<M> t;
  for (int64_t d = 0; d < out; ++d) {
    M src = align_corners ? scale * M(d) : std::max(M(0), scale * (M(d) + M(0.5)) - M(0.5));
    const int64_t lo = std::min(int64_t(src), in - 1);
    t.lo.push_back(lo);
    t.hi.push_back(lo < in - 1 ? lo + 1 : lo);
    t.w_hi.push_back(src - M(lo));
  }
  return t;
}

void upsample_kernel(const OpArgs& a, std::span<const Tensor> out) {
  const Tensor x = contiguous(a.tensor(0));
  const bool align = a.boolean(2);
  const int64_t planes = x.size(0) * x.size(1), ih = x.size(2), iw = x.size(3);
  const int64_t oh = out[0].size(2), ow = out[0].size(3);
  Tensor result = out[0].is_contiguous() ? out[0] : Tensor::empty(out[0].sizes(), out[0].dtype());
  INGOT_DISPATCH_FLOATING_TYPES(x.dtype(), a.name(), [&]<typename T>() {
    using M = opmath_t<T>;
    const Taps<M> th = taps<M>(ih, oh, align, a.optional_f64(3));
    const Taps<M> tw = taps<M>(iw, ow, align, a.optional_f64(4));
    const T* src = x.data<T>();
    T* dst = result.data<T>();
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = src + p * ih * iw;
      for (int64_t i = 0; i < oh; ++i) {
        const T* r0 = plane + th.lo[i] * iw;
        const T* r1 = plane + th.hi[i] * iw;
        const M h1 = th.w_hi[i], h0 = M(1) - h1;
        for (int64_t j = 0; j < ow; ++j) {
          const M w1 = tw.w_hi[j], w0 = M(1) - w1;
          const int64_t c0 = tw.lo[j], c1 = tw.hi[j];
          const M v =
              h0 * (w0 * M(r0[c0]) + w1 * M(r0[c1])) + h1 * (w0 * M(r1[c0]) + w1 * M(r1[c1]));
          dst[(p * oh + i) * ow + j] = T(v);
        }
      }
    }
  });
  if (!result.is_same(out[0])) cpu::copy_cast(out[0], result);
}

const OpRegistrar kUpsampleBilinear2d(
    define_op("upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
              "float? scales_h=None, float? scales_w=None) -> Tensor")
        .shape(upsample_shape)
        .cpu(upsample_kernel));

const OpHandle kUpsample("upsample_bilinear2d");

}  // namespace

Tensor upsample_bilinear2d(const Tensor& self, const SymIntList& output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w,
                           std::source_location where) {
  CallSiteScope call_site(where);
  return kUpsample({self, output_size, align_corners, scales_h, scales_w})[0];
}

}  // namespace ingot
