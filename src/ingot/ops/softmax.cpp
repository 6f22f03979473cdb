// _softmax / _log_softmax (ATen's kernels, with half_to_float) and the user-facing
// softmax.int / log_softmax.int (optional dtype conversion first).
//
// Rows are max-subtracted and computed in float for 16-bit inputs (double for double).
// A row of all -inf gives NaN, as in torch (exp(-inf - -inf) is NaN).
#include <cmath>
#include <limits>

#include "ingot/ops/registry.h"
#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/vec_math.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/reduction.h"

namespace ingot {
namespace {

constexpr int64_t kGrain = 32768;  // elements per thread at least

// The input as [outer, n, inner] (contiguous) around `dim`.
struct RowGeometry {
  int64_t outer = 1, n = 1, inner = 1;
};

RowGeometry row_geometry(const IntShape& sizes, int64_t dim) {
  RowGeometry g;
  for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
    if (d < dim) g.outer *= sizes[size_t(d)];
    else if (d == dim) g.n = sizes[size_t(d)];
    else g.inner *= sizes[size_t(d)];
  }
  return g;
}

// Rows along the last dim: y[r, :] = softmax(x[r, :]).
template <typename T, typename O, bool kLog>
void softmax_rows(const T* x, O* y, const RowGeometry& g) {
  using M = opmath_t<T>;
  const int64_t n = g.n;
  parallel_for(0, g.outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)),
               [&](int64_t rb, int64_t re) {
    // The row in M, then its shifted exponentials (two buffers keep each loop simple
    // enough to vectorise).
    std::vector<M> buf(static_cast<size_t>(n)), ex(static_cast<size_t>(n));
    for (int64_t r = rb; r < re; ++r) {
      const T* xr = x + r * n;
      O* yr = y + r * n;
      for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = M(xr[i]);
      // NaN is skipped by the max but still turns the row to NaN through exp.
      const M mx = cpu::lane_max(buf.data(), n);
      for (int64_t i = 0; i < n; ++i) ex[size_t(i)] = std::exp(buf[size_t(i)] - mx);
      const M sum = cpu::lane_sum(ex.data(), n);
      if constexpr (kLog) {
        const M shift = mx + std::log(sum);
        for (int64_t i = 0; i < n; ++i) yr[i] = O(buf[size_t(i)] - shift);
      } else {
        const M inv = M(1) / sum;
        for (int64_t i = 0; i < n; ++i) yr[i] = O(ex[size_t(i)] * inv);
      }
    }
  });
}

// dim is not the last: for each outer index, columns [n, inner] are reduced along n
// with one accumulator per column (contiguous loads along inner).
template <typename T, typename O, bool kLog>
void softmax_columns(const T* x, O* y, const RowGeometry& g) {
  using M = opmath_t<T>;
  const int64_t n = g.n, inner = g.inner;
  parallel_for(0, g.outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(n * inner, 1)),
               [&](int64_t ob, int64_t oe) {
    std::vector<M> mx(static_cast<size_t>(inner)), sum(static_cast<size_t>(inner));
    for (int64_t o = ob; o < oe; ++o) {
      const T* xo = x + o * n * inner;
      O* yo = y + o * n * inner;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<M>::infinity());
      std::fill(sum.begin(), sum.end(), M(0));
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) {
          const M v = M(xo[i * inner + j]);
          mx[size_t(j)] = v > mx[size_t(j)] ? v : mx[size_t(j)];
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) sum[size_t(j)] += std::exp(M(xo[i * inner + j]) - mx[size_t(j)]);
      }
      for (int64_t j = 0; j < inner; ++j) {
        // log: the shift per column; softmax: the reciprocal of the sum.
        sum[size_t(j)] = kLog ? mx[size_t(j)] + std::log(sum[size_t(j)]) : M(1) / sum[size_t(j)];
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < inner; ++j) {
          const M v = M(xo[i * inner + j]);
          yo[i * inner + j] = kLog ? O(v - sum[size_t(j)]) : O(std::exp(v - mx[size_t(j)]) * sum[size_t(j)]);
        }
      }
    }
  });
}

// out = (log_)softmax(x) along dim; x floating; out of x's dtype or float32.
void softmax_into(const Tensor& x_in, int64_t dim, const Tensor& out, bool log,
                  std::string_view op) {
  const Tensor x = contiguous(x_in);
  const RowGeometry g = row_geometry(x.sizes(), x.dim() == 0 ? 0 : dim);
  if (x.numel() == 0) return;
  INGOT_DISPATCH_FLOATING_TYPES(x.dtype(), op, [&]<typename T>() {
    auto run = [&]<typename O>() {
      const T* src = x.data<T>();
      O* dst = out.data<O>();
      if (g.inner == 1) {
        if (log) softmax_rows<T, O, true>(src, dst, g);
        else softmax_rows<T, O, false>(src, dst, g);
      } else {
        if (log) softmax_columns<T, O, true>(src, dst, g);
        else softmax_columns<T, O, false>(src, dst, g);
      }
    };
    if (out.dtype() == x.dtype()) run.template operator()<T>();
    else run.template operator()<float>();  // half_to_float
  });
}

// _softmax(Tensor self, int dim, bool half_to_float)
std::vector<OutputMeta> aten_softmax_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  check_floating(x, a.name(), "self");
  wrap_dim(a.int_(1), x.dim(), a.name());
  const bool half_to_float = a.boolean(2);
  INGOT_CHECK(!half_to_float || x.dtype() == DType::F16 || x.dtype() == DType::BF16, DTypeError,
              "[{}] half_to_float needs a float16 or bfloat16 input, got {}", a.name(),
              x.dtype());
  return {{half_to_float ? DType::F32 : x.dtype(), x.sym_sizes()}};
}

CpuKernel aten_softmax_kernel(bool log) {
  return [log](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor& x = a.tensor(0);
    softmax_into(x, wrap_dim(a.int_(1), x.dim(), a.name()), out[0], log, a.name());
  };
}

// softmax.int(Tensor self, int dim, ScalarType? dtype=None)
std::vector<OutputMeta> softmax_int_shape(const OpArgs& a) {
  const Tensor& x = a.tensor(0);
  wrap_dim(a.int_(1), x.dim(), a.name());
  const DType t = a.optional_dtype(2).value_or(x.dtype());
  INGOT_CHECK(is_floating(t), DTypeError,
              "[{}] softmax of a {} tensor needs a floating dtype: pass dtype=float32 or "
              "convert the input",
              a.name(), t);
  return {{t, x.sym_sizes()}};
}

CpuKernel softmax_int_kernel(bool log) {
  return [log](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor& x = a.tensor(0);
    softmax_into(to(x, out[0].dtype()), wrap_dim(a.int_(1), x.dim(), a.name()), out[0], log,
                 a.name());
  };
}

const OpRegistrar kAtenSoftmax(
    define_op("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
        .shape(aten_softmax_shape)
        .cpu(aten_softmax_kernel(false)));
const OpRegistrar kAtenLogSoftmax(
    define_op("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
        .shape(aten_softmax_shape)
        .cpu(aten_softmax_kernel(true)));

const OpHandle kAtenSoftmaxOp("_softmax"), kAtenLogSoftmaxOp("_log_softmax");

// softmax.int = _softmax(self.to(dtype), dim, False), the same for log_softmax.
Decomposition softmax_int_decomposition(const OpHandle& aten_op) {
  return [&aten_op](const OpArgs& a) {
    const Tensor& x = a.tensor(0);
    const Tensor src = to(x, a.optional_dtype(2).value_or(x.dtype()));
    return aten_op({src, a[1], false});
  };
}

const OpRegistrar kSoftmaxInt(
    define_op("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
        .shape(softmax_int_shape)
        .cpu(softmax_int_kernel(false))
        .decompose(softmax_int_decomposition(kAtenSoftmaxOp)));
const OpRegistrar kLogSoftmaxInt(
    define_op("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
        .shape(softmax_int_shape)
        .cpu(softmax_int_kernel(true))
        .decompose(softmax_int_decomposition(kAtenLogSoftmaxOp)));

const OpHandle kSoftmaxOp("softmax.int"), kLogSoftmaxOp("log_softmax.int");

}  // namespace

Tensor softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kSoftmaxOp({t, dim, dtype})[0];
}
Tensor log_softmax(const Tensor& t, int64_t dim, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kLogSoftmaxOp({t, dim, dtype})[0];
}

}  // namespace ingot
