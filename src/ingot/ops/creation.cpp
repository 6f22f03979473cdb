// Tensor creation: arange, full, zeros, ones, empty; and the triangle masks triu, tril.
#include "ingot/ops/functional/creation.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

// Elements per thread below which fills stay single-threaded.
constexpr int64_t kFillGrain = 1 << 16;

// --- arange --------------------------------------------------------------------------------

struct Range {
  Scalar start = 0, end = 0, step = 1;
  DType dtype = DType::I64;
  int64_t length = 0;
};

// Reads the arguments of arange / arange.start / arange.start_step and computes the
// length as ATen does: integer arithmetic for int64 results, double otherwise.
Range arange_range(const OpArgs& a) {
  Range r;
  const std::string& overload = a.op().schema.overload;
  size_t dtype_at = 1;
  if (overload.empty()) {
    r.end = a.scalar(0);
  } else {
    r.start = a.scalar(0);
    r.end = a.scalar(1);
    dtype_at = 2;
    if (overload == "start_step") {
      r.step = a.scalar(2);
      dtype_at = 3;
    }
  }
  const bool any_float = r.start.is_floating() || r.end.is_floating() || r.step.is_floating();
  r.dtype = a.optional_dtype(dtype_at).value_or(any_float ? DType::F32 : DType::I64);
  INGOT_CHECK(r.dtype != DType::Bool, DTypeError, "[{}] bool is not supported as a dtype",
              a.name());
  double size_d;
  if (is_integral(r.dtype)) {
    const int64_t s = r.start.to_int(), e = r.end.to_int(), st = r.step.to_int();
    INGOT_CHECK(st != 0, ValueError, "[{}] step must be nonzero", a.name());
    INGOT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError,
                "[{}] upper bound {} and lower bound {} are inconsistent with step sign {}",
                a.name(), e, s, st);
    if (r.dtype == DType::I64) {
      const int64_t sgn = st > 0 ? 1 : -1;
      size_d = double((e - s + st - sgn) / st);  // exact integer ceil-division
    } else {
      size_d = std::ceil((r.end.to_double() - r.start.to_double()) / r.step.to_double());
    }
  } else {
    const double s = r.start.to_double(), e = r.end.to_double(), st = r.step.to_double();
    INGOT_CHECK(std::isfinite(s) && std::isfinite(e), ValueError,
                "[{}] unsupported range: start {} and end {} must be finite", a.name(), s, e);
    INGOT_CHECK(st != 0, ValueError, "[{}] step must be nonzero", a.name());
    INGOT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError,
                "[{}] upper bound {} and lower bound {} are inconsistent with step sign {}",
                a.name(), e, s, st);
    size_d = std::ceil((e - s) / st);
  }
  INGOT_CHECK(size_d >= 0 && size_d <= double(std::numeric_limits<int64_t>::max()), ValueError,
              "[{}] invalid size {} for the range; possible overflow", a.name(), size_d);
  r.length = int64_t(size_d);
  return r;
}

// The symbolic form (export): some bound is a SymInt (see registry.cpp's coerce). The step
// must be a plain nonzero integer; the length is the exact integer ceil-division over
// SymInts, and the direction of the range becomes a guard unless it is provable.
std::vector<OutputMeta> symbolic_arange_shape(const OpArgs& a) {
  const std::string& overload = a.op().schema.overload;
  auto bound = [&](size_t i) -> SymInt {
    if (a[i].is(Value::Kind::Int)) return a.sym_int(i);
    INGOT_CHECK(a.scalar(i).is_integral(), ValueError,
                "[{}] with a symbolic bound, every bound must be an integer (got {})", a.name(),
                a.scalar(i).str());
    return SymInt(a.scalar(i).to_int());
  };
  SymInt start = 0, end, step = 1;
  size_t dtype_at = 1;
  if (overload.empty()) {
    end = bound(0);
  } else {
    start = bound(0);
    end = bound(1);
    dtype_at = 2;
    if (overload == "start_step") {
      step = bound(2);
      dtype_at = 3;
    }
  }
  INGOT_CHECK(step.is_concrete() && step.expect_int() != 0, ValueError,
              "[{}] with a symbolic bound the step must be a nonzero integer, got {}", a.name(),
              step.str());
  const DType dtype = a.optional_dtype(dtype_at).value_or(DType::I64);
  INGOT_CHECK(dtype != DType::Bool, DTypeError, "[{}] bool is not supported as a dtype", a.name());
  const int64_t st = step.expect_int();
  INGOT_CHECK((st > 0 ? end >= start : end <= start).guard_bool(), ValueError,
              "[{}] upper bound {} and lower bound {} are inconsistent with step sign {}",
              a.name(), end.str(), start.str(), st);
  const SymInt length = floordiv(end - start + (st - (st > 0 ? 1 : -1)), step);
  return {OutputMeta{dtype, {length}}};
}

bool any_symbolic_bound(const OpArgs& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is(Value::Kind::Int)) return true;
  }
  return false;
}

std::vector<OutputMeta> arange_shape(const OpArgs& a) {
  if (any_symbolic_bound(a)) return symbolic_arange_shape(a);
  Range r = arange_range(a);
  return {OutputMeta{r.dtype, {SymInt(r.length)}}};
}

// out[i] = start + i * step, computed in int64 for integer results and double otherwise.
void arange_kernel(const OpArgs& a, std::span<const Tensor> out) {
  Range r = arange_range(a);
  INGOT_DISPATCH_NUMERIC_TYPES(r.dtype, a.name(), [&]<typename T>() {
    T* p = out[0].data<T>();
    if constexpr (std::is_integral_v<T>) {
      const int64_t s = r.start.to_int(), st = r.step.to_int();
      parallel_for(0, r.length, kFillGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = T(s + i * st);
      });
    } else {
      const double s = r.start.to_double(), st = r.step.to_double();
      parallel_for(0, r.length, kFillGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = T(opmath_t<T>(s + double(i) * st));
      });
    }
  });
}

const OpRegistrar kArange(define_op("arange(Scalar end, *, ScalarType? dtype=None) -> Tensor")
                              .shape(arange_shape)
                              .cpu(arange_kernel));
const OpRegistrar kArangeStart(
    define_op("arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None) -> Tensor")
        .shape(arange_shape)
        .cpu(arange_kernel));
const OpRegistrar kArangeStartStep(
    define_op("arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
              "ScalarType? dtype=None) -> Tensor")
        .shape(arange_shape)
        .cpu(arange_kernel));

// --- full / zeros / ones / empty ------------------------------------------------------------

Shape checked_size(const OpArgs& a) {
  const SymIntList& size = a.sym_int_list(0);
  for (size_t i = 0; i < size.size(); ++i) {
    INGOT_CHECK(!(size[i].maybe_int() && *size[i].maybe_int() < 0), ValueError,
                "[{}] negative size {} in dim {} of {}", a.name(), size[i].str(), i,
                shape_str(size));
  }
  return size;
}

// Shape function for creation ops whose dtype argument sits at `dtype_at`; without one,
// the dtype comes from the fill value (full) or defaults to float32.
ShapeFn fill_shape(size_t dtype_at, bool dtype_from_fill) {
  return [=](const OpArgs& a) {
    DType fallback = dtype_from_fill ? a.scalar(1).default_dtype() : DType::F32;
    return std::vector<OutputMeta>{
        {a.optional_dtype(dtype_at).value_or(fallback), checked_size(a)}};
  };
}

void fill(const Tensor& out, const Scalar& value) {
  const int64_t n = out.numel();
  INGOT_DISPATCH_ALL_TYPES(out.dtype(), "fill", [&]<typename T>() {
    const T v = value.to<T>();
    T* p = out.data<T>();
    parallel_for(0, n, kFillGrain, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, v); });
  });
}

CpuKernel fill_kernel(std::optional<Scalar> constant) {
  return [constant](const OpArgs& a, std::span<const Tensor> out) {
    fill(out[0], constant ? *constant : a.scalar(1));
  };
}

const OpRegistrar kFull(
    define_op("full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None) -> Tensor")
        .shape(fill_shape(2, true))
        .cpu(fill_kernel(std::nullopt)));
const OpRegistrar kZeros(define_op("zeros(SymInt[] size, *, ScalarType? dtype=None) -> Tensor")
                             .shape(fill_shape(1, false))
                             .cpu(fill_kernel(Scalar(0))));
const OpRegistrar kOnes(define_op("ones(SymInt[] size, *, ScalarType? dtype=None) -> Tensor")
                            .shape(fill_shape(1, false))
                            .cpu(fill_kernel(Scalar(1))));
// Contents are unspecified, as in torch; eager fills zeros so results are reproducible.
const OpRegistrar kEmpty(
    define_op("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None) -> Tensor")
        .shape(fill_shape(1, false))
        .cpu(fill_kernel(Scalar(0))));

// --- triu / tril -------------------------------------------------------------------------------

std::vector<OutputMeta> triangle_shape(const OpArgs& a) {
  const Tensor& t = a.tensor(0);
  INGOT_CHECK(t.dim() >= 2, ShapeError,
              "[{}] input must have at least 2 dims (a matrix or a batch of them), got shape {}",
              a.name(), t.shape_string());
  return {OutputMeta{t.dtype(), t.sym_sizes()}};
}

// Keeps element [i, j] of every matrix where j - i >= diagonal (upper) or
// j - i <= diagonal (lower) and zeroes the rest. Works on bytes: zero is all-zero bits
// in every dtype.
CpuKernel triangle_kernel(bool upper) {
  return [upper](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor& o = out[0];
    if (o.numel() == 0) return;
    Tensor x = a.tensor(0);
    if (!x.is_contiguous()) {
      Tensor c = Tensor::empty(x.sizes(), x.dtype());
      cpu::copy_cast(c, x);
      x = c;
    }
    const int64_t rows = o.size(-2), cols = o.size(-1);
    const int64_t total_rows = o.numel() / cols;
    const int64_t diagonal = a.int_(1);
    const size_t item = itemsize(o.dtype());
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(o.raw_data());
    parallel_for(0, total_rows, std::max<int64_t>(1, kFillGrain / cols), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t i = r % rows;
        // Columns kept: [lo, hi).
        const int64_t lo = upper ? std::clamp<int64_t>(i + diagonal, 0, cols) : 0;
        const int64_t hi = upper ? cols : std::clamp<int64_t>(i + diagonal + 1, 0, cols);
        const size_t row = size_t(r * cols) * item;
        std::memset(dst + row, 0, size_t(lo) * item);
        if (hi > lo)
          std::memcpy(dst + row + size_t(lo) * item, src + row + size_t(lo) * item,
                      size_t(hi - lo) * item);
        std::memset(dst + row + size_t(hi) * item, 0, size_t(cols - hi) * item);
      }
    });
  };
}

const OpRegistrar kTriu(define_op("triu(Tensor self, int diagonal=0) -> Tensor")
                            .shape(triangle_shape)
                            .cpu(triangle_kernel(true)));
const OpRegistrar kTril(define_op("tril(Tensor self, int diagonal=0) -> Tensor")
                            .shape(triangle_shape)
                            .cpu(triangle_kernel(false)));

const OpHandle kArangeOp("arange"), kArangeStartOp("arange.start"),
    kArangeStartStepOp("arange.start_step"), kFullOp("full"),
    kZerosOp("zeros"), kOnesOp("ones"), kEmptyOp("empty.memory_format"), kTriuOp("triu"),
    kTrilOp("tril");

}  // namespace

Tensor arange(Scalar end, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kArangeOp({end, dtype})[0];
}
Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kArangeStartStepOp({start, end, step, dtype})[0];
}
Tensor arange_symint(const SymInt& end, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kArangeOp({end, dtype})[0];
}
Tensor arange_symint(const SymInt& start, const SymInt& end, std::optional<DType> dtype,
                     std::source_location where) {
  CallSiteScope call_site(where);
  return kArangeStartOp({start, end, dtype})[0];
}
Tensor full(const IntShape& size, Scalar fill_value, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kFullOp({size, fill_value, dtype})[0];
}
Tensor full_symint(const SymIntList& size, Scalar fill_value, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kFullOp({size, fill_value, dtype})[0];
}
Tensor zeros(const IntShape& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kZerosOp({size, dtype})[0];
}
Tensor zeros_symint(const SymIntList& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kZerosOp({size, dtype})[0];
}
Tensor ones(const IntShape& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kOnesOp({size, dtype})[0];
}
Tensor ones_symint(const SymIntList& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kOnesOp({size, dtype})[0];
}
Tensor empty(const IntShape& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kEmptyOp({size, dtype})[0];
}
Tensor empty_symint(const SymIntList& size, std::optional<DType> dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return kEmptyOp({size, dtype})[0];
}
Tensor triu(const Tensor& t, int64_t diagonal, std::source_location where) {
  CallSiteScope call_site(where);
  return kTriuOp({t, diagonal})[0];
}
Tensor tril(const Tensor& t, int64_t diagonal, std::source_location where) {
  CallSiteScope call_site(where);
  return kTrilOp({t, diagonal})[0];
}

}  // namespace ingot
