// Shared helpers for op tests: random tensors of any dtype, non-contiguous copies with
// the same values, and element-wise comparison against reference values.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot::testing {

// Values of t in logical row-major order, as doubles (any dtype, any strides).
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  const IntShape sz = t.sizes();
  const int64_t n = shape_numel(sz);
  out.reserve(size_t(n));
  IntShape idx(sz.size(), 0);
  const char* base = static_cast<const char*>(t.raw_data());
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t d = 0; d < sz.size(); ++d) off += idx[d] * t.strides()[d];
    INGOT_DISPATCH_ALL_TYPES(t.dtype(), "values", [&]<typename T>() {
      const T v = reinterpret_cast<const T*>(base)[off];
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        out.push_back(double(float(v)));
      } else {
        out.push_back(double(v));
      }
    });
    for (size_t d = sz.size(); d-- > 0;) {
      if (++idx[d] < sz[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// max |a - b| over all elements (EXPECTs equal shapes; compares the common prefix
// otherwise).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  const std::vector<double> va = values(a), vb = values(b);
  double m = 0;
  for (size_t i = 0; i < std::min(va.size(), vb.size()); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}

// A contiguous tensor of `dtype` filled from `gen(i)` (converted to the dtype).
inline Tensor make_tensor(const IntShape& sizes, DType dtype,
                          const std::function<double(int64_t)>& gen) {
  Tensor t = Tensor::empty(sizes, dtype);
  const int64_t n = shape_numel(sizes);
  INGOT_DISPATCH_ALL_TYPES(dtype, "make_tensor", [&]<typename T>() {
    T* p = static_cast<T*>(t.raw_data());
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        p[i] = T(float(gen(i)));
      } else {
        p[i] = static_cast<T>(gen(i));
      }
    }
  });
  return t;
}

// Random values: floats uniform in [lo, hi); integers in [lo, hi]; bool 0/1.
inline Tensor random_tensor(const IntShape& sizes, DType dtype, std::mt19937& rng,
                            double lo = -2.0, double hi = 2.0) {
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> int_dist{int64_t(lo), int64_t(hi)};
  std::bernoulli_distribution coin(0.5);
  return make_tensor(sizes, dtype, [&](int64_t) -> double {
    if (dtype == DType::Bool) return coin(rng) ? 1.0 : 0.0;
    if (is_integral(dtype)) return double(int_dist(rng));
    return real(rng);
  });
}

// The same values as t, laid out non-contiguously: stored transposed (last two dims)
// inside a larger buffer and viewed back, so every stride differs from contiguous.
inline Tensor noncontiguous_like(const Tensor& t) {
  if (t.dim() < 2) {
    // Every other element of a buffer twice as large.
    Tensor big = Tensor::empty({std::max<int64_t>(t.numel(), 1) * 2}, t.dtype(), true);
    Tensor v = big.as_strided(t.sizes(), t.dim() == 1 ? IntShape{2} : IntShape{}, 1);
    return copy_(v, t);
  }
  IntShape perm_sizes = t.sizes();
  std::swap(perm_sizes[perm_sizes.size() - 1], perm_sizes[perm_sizes.size() - 2]);
  Tensor store = Tensor::empty(perm_sizes, t.dtype(), true);
  Tensor v = transpose(store, -1, -2);
  return copy_(v, t);
}

// Checks |actual - expected| <= atol + rtol * |expected| everywhere (NaN matches NaN).
inline void expect_close(const Tensor& actual, const std::vector<double>& expected,
                         double atol, double rtol, const std::string& what = "") {
  std::vector<double> got = values(actual);
  ASSERT_EQ(got.size(), expected.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = expected[i], g = got[i];
    if (std::isnan(e) && std::isnan(g)) continue;
    if (std::isinf(e) && g == e) continue;
    if (!(std::abs(g - e) <= atol + rtol * std::abs(e))) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", expected " << e;
      if (++reported > 5) return;
    }
  }
}

// Tolerances for comparing a result of dtype t against a double reference.
inline double default_atol(DType t) {
  switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F32: return 1e-5;
    case DType::F64: return 1e-12;
    default: return 0;
  }
}
inline double default_rtol(DType t) {
  switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F32: return 1e-5;
    case DType::F64: return 1e-12;
    default: return 0;
  }
}

// f(a, b) over the broadcast of a and b to `out`, in double precision, row-major.
inline std::vector<double> reference_binary(const Tensor& a, const Tensor& b,
                                            const IntShape& out,
                                            const std::function<double(double, double)>& f) {
  auto va = values(a), vb = values(b);
  IntShape as = a.sizes(), bs = b.sizes();
  std::vector<double> r;
  IntShape idx(out.size(), 0);
  auto offset = [&](const IntShape& s) {  // flat index into an operand of shape s
    int64_t off = 0;
    for (size_t d = 0; d < s.size(); ++d) {
      size_t od = out.size() - s.size() + d;
      off = off * s[d] + (s[d] == 1 ? 0 : idx[od]);
    }
    return off;
  };
  for (int64_t e = 0; e < shape_numel(out); ++e) {
    r.push_back(f(va[size_t(offset(as))], vb[size_t(offset(bs))]));
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

// Runs shape functions only (what the export tracer will do): every result is a
// data-less tensor; the names of the ops called are recorded.
struct ShapeOnlyInterceptor : OpInterceptor {
  std::vector<std::string> ops;
  std::vector<Tensor> intercept(const OpArgs& args) override {
    ops.push_back(args.name());
    std::vector<Tensor> out;
    for (auto& m : args.op().shape_fn(args)) out.push_back(Tensor::meta(m.dtype, m.sizes));
    return out;
  }
};

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::U8,  DType::I8,   DType::I16,
                                       DType::I32,  DType::I64, DType::F16,  DType::BF16,
                                       DType::F32,  DType::F64};
inline constexpr DType kFloatDTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

}  // namespace ingot::testing
