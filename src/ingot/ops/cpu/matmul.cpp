// Batched matrix products: one cpu::gemm per batch entry (or one folded gemm), threaded
// over the batch when each product is too small to be threaded inside gemm.
#include "ingot/ops/cpu/matmul.h"

#include "ingot/core/thread_pool.h"
#include "ingot/ops/cpu/gemm.h"

namespace ingot::cpu {
namespace {

// One [m, k] x [k, n] -> [m, n] product on raw strided data.
struct Product {
  int64_t m, n, k;
  DType dtype;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs;  // element strides (c has unit column stride)
};

bool gemm_dtype(DType t) {
  return t == DType::F32 || t == DType::BF16 || t == DType::F16;
}

// Plain loop for f64 and integer dtypes (accumulating in double / int64).
template <typename T>
void naive_product(const Product& p, const T* a, const T* b, T* c, double alpha, double beta) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      Acc s = 0;
      for (int64_t q = 0; q < p.k; ++q)
        s += Acc(a[i * p.a_rs + q * p.a_cs]) * Acc(b[q * p.b_rs + j * p.b_cs]);
      T& dst = c[i * p.c_rs + j];
      if constexpr (std::is_floating_point_v<T>) {
        dst = T(alpha * double(s) + (beta == 0.0 ? 0.0 : beta * double(dst)));
      } else {
        dst = T(Acc(alpha) * s + (beta == 0.0 ? 0 : Acc(beta) * Acc(dst)));
      }
    }
}

void run_product(const Product& p, const void* a, const void* b, void* c, double alpha,
                 double beta) {
  if (gemm_dtype(p.dtype)) {
    GemmArgs g;
    g.m = p.m, g.n = p.n, g.k = p.k;
    g.a = {a, p.dtype, p.a_rs, p.a_cs};
    g.b = {b, p.dtype, p.b_rs, p.b_cs};
    g.c = c, g.c_dtype = p.dtype, g.ldc = p.c_rs;
    g.alpha = float(alpha), g.beta = float(beta);
    gemm(g);
    return;
  }
  INGOT_DISPATCH_NUMERIC_TYPES(p.dtype, "matmul", [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      INGOT_THROW(InternalError, "[matmul] 16-bit float reached the plain loop");
    } else {
      naive_product<T>(p, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(c),
                       alpha, beta);
    }
  });
}

// True when dims [0, last) of t (sizes/strides) plus dim `last` can be walked as a single
// dim of stride strides[last]: each outer stride equals the next one times its size.
bool rows_fold(const IntShape& sizes, const IntShape& strides, size_t last) {
  for (size_t d = last; d-- > 0;)
    if (sizes[d] != 1 && strides[d] != strides[d + 1] * sizes[d + 1]) return false;
  return true;
}

}  // namespace

void matmul_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t rank = out.dim();
  INGOT_INTERNAL_ASSERT(rank >= 2 && a.dim() == rank && b.dim() == rank);
  const IntShape osz = out.sizes();
  const int64_t m = osz[size_t(rank - 2)], n = osz[size_t(rank - 1)];
  const int64_t k = a.size(rank - 1);
  INGOT_INTERNAL_ASSERT(out.stride(rank - 1) == 1 || n <= 1);
  const size_t esize = itemsize(out.dtype());
  const IntShape& as = a.strides();
  const IntShape& bs = b.strides();
  const IntShape& cs = out.strides();

  Product p{m,
            n,
            k,
            out.dtype(),
            as[size_t(rank - 2)],
            as[size_t(rank - 1)],
            bs[size_t(rank - 2)],
            bs[size_t(rank - 1)],
            cs[size_t(rank - 2)]};
  if (n <= 1) p.c_rs = std::max<int64_t>(p.c_rs, 1);
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d) batch *= osz[size_t(d)];
  if (batch == 0 || m == 0 || n == 0) return;

  const char* abase = static_cast<const char*>(a.raw_data());
  const char* bbase = static_cast<const char*>(b.raw_data());
  char* cbase = static_cast<char*>(out.raw_data());

  // Batch dims of b all stride 0 (one shared weight) and a, out walkable as rows: fold.
  bool b_shared = true;
  for (int64_t d = 0; d < rank - 2; ++d)
    b_shared = b_shared && (osz[size_t(d)] == 1 || bs[size_t(d)] == 0);
  if (batch > 1 && b_shared && rows_fold(a.sizes(), as, size_t(rank - 2)) &&
      rows_fold(osz, cs, size_t(rank - 2))) {
    p.m = batch * m;
    run_product(p, abase, bbase, cbase, alpha, beta);
    return;
  }

  // Element offsets of batch entry i in a, b and out.
  auto offsets = [&](int64_t i, int64_t* oa, int64_t* ob, int64_t* oc) {
    *oa = *ob = *oc = 0;
    for (int64_t d = rank - 3; d >= 0; --d) {
      const int64_t sz = osz[size_t(d)], idx = i % sz;
      i /= sz;
      *oa += idx * as[size_t(d)];
      *ob += idx * bs[size_t(d)];
      *oc += idx * cs[size_t(d)];
    }
  };
  auto run_range = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      int64_t oa, ob, oc;
      offsets(i, &oa, &ob, &oc);
      run_product(p, abase + oa * int64_t(esize), bbase + ob * int64_t(esize),
                  cbase + oc * int64_t(esize), alpha, beta);
    }
  };
  // Small products are not threaded inside gemm: spread the batch instead.
  const double flops = 2.0 * double(m) * double(n) * double(k);
  if (flops < 4e6) {
    parallel_for(0, batch, std::max<int64_t>(1, int64_t(1e6 / std::max(flops, 1.0))), run_range);
  } else {
    run_range(0, batch);
  }
}

}  // namespace ingot::cpu
