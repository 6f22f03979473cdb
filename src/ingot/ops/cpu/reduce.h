// Reductions over any set of dims of a strided tensor (a small TensorIterator for
// reductions).
//
// The input is viewed as [outer..., reduced...]: kept dims first, reduced dims last, each
// group in logical order and coalesced where strides allow, so the linear index within
// the reduced group is the row-major index over the reduced dims (argmax relies on it).
// The output is contiguous over the kept dims, in logical order.
//
// A Reducer policy over input type T defines:
//   using acc_t;                          accumulator (float for 16-bit floats, ...)
//   acc_t init() const;                   identity
//   acc_t step(acc_t a, T v, int64_t i) const;   fold in element v at reduced index i
//   acc_t merge(acc_t a, acc_t b) const;  combine two partial results (any order)
//   Out finish(acc_t a) const;            the output value
//
// Three loops, picked from the strides:
//   inner: the reduced group ends with stride 1 (e.g. sum over the last dim): each
//          output folds contiguous runs with 16 independent lanes (vectorisable) in
//          blocks, threaded over outputs or, for a single output, over the run.
//   outer: the kept group ends with stride 1 (e.g. sum over dim 0 of [N, C]): rows of
//          accumulators, one per output column, updated with contiguous loads.
//   general: per output, a strided walk over the reduced group.
#pragma once

#include <algorithm>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/core/thread_pool.h"

namespace ingot::cpu {

inline constexpr int64_t kReduceGrain = 32768;  // elements per thread at least

struct ReduceGeometry {
  IntShape outer_sizes, outer_strides;  // coalesced kept dims (element strides)
  IntShape red_sizes, red_strides;      // coalesced reduced dims
  int64_t n_out = 1, n_red = 1;
};

// Drops size-1 dims and merges neighbours whose strides chain (row-major order kept).
inline void coalesce(IntShape& sizes, IntShape& strides) {
  IntShape s, st;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!s.empty() && st.back() == strides[d] * sizes[d]) {
      s.back() *= sizes[d];
      st.back() = strides[d];
    } else {
      s.push_back(sizes[d]);
      st.push_back(strides[d]);
    }
  }
  sizes = std::move(s);
  strides = std::move(st);
}

inline ReduceGeometry make_reduce_geometry(const Tensor& x, const std::vector<bool>& reduced) {
  ReduceGeometry g;
  const IntShape sizes = x.sizes();
  for (size_t d = 0; d < sizes.size(); ++d) {
    IntShape& s = reduced[d] ? g.red_sizes : g.outer_sizes;
    IntShape& st = reduced[d] ? g.red_strides : g.outer_strides;
    s.push_back(sizes[d]);
    st.push_back(x.stride(int64_t(d)));
    (reduced[d] ? g.n_red : g.n_out) *= sizes[d];
  }
  coalesce(g.outer_sizes, g.outer_strides);
  coalesce(g.red_sizes, g.red_strides);
  return g;
}

// Offset (in elements) of linear index `linear` over a row-major group of dims.
inline int64_t group_offset(const IntShape& sizes, const IntShape& strides, int64_t linear) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

// Calls fn(offset, linear) for linear in [begin, end) over a group of dims, stepping the
// multi-index incrementally.
template <typename F>
void for_each_in_group(const IntShape& sizes, const IntShape& strides, int64_t begin,
                       int64_t end, F&& fn) {
  if (begin >= end) return;
  const size_t rank = sizes.size();
  if (rank == 0) {
    fn(int64_t(0), int64_t(0));
    return;
  }
  IntShape idx(rank, 0);
  int64_t rem = begin, off = 0;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = rem % sizes[d];
    rem /= sizes[d];
    off += idx[d] * strides[d];
  }
  for (int64_t lin = begin; lin < end; ++lin) {
    fn(off, lin);
    for (size_t d = rank; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < sizes[d]) break;
      off -= idx[d] * strides[d];
      idx[d] = 0;
    }
  }
}

// Folds the contiguous run p[0, n) (reduced indices idx0 + i) into a partial result.
// A Reducer may provide its own `acc_t run(const T* p, int64_t n, int64_t idx0)`.
template <typename T, typename R>
typename R::acc_t reduce_run(const R& r, const T* p, int64_t n, int64_t idx0) {
  using A = typename R::acc_t;
  if constexpr (requires { r.run(p, n, idx0); }) return r.run(p, n, idx0);
  constexpr int64_t kLanes = 16, kBlock = 4096;
  A total = r.init();
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    A lanes[kLanes];
    for (auto& l : lanes) l = r.init();
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes) {
      for (int64_t k = 0; k < kLanes; ++k) lanes[k] = r.step(lanes[k], p[i + k], idx0 + i + k);
    }
    A block = lanes[0];
    for (int64_t k = 1; k < kLanes; ++k) block = r.merge(block, lanes[k]);
    for (; i < e; ++i) block = r.step(block, p[i], idx0 + i);
    total = r.merge(total, block);
  }
  return total;
}

// out[o] = finish(fold over the reduced group of x at output o). out is contiguous with
// n_out elements of type Out; x holds T.
template <typename T, typename Out, typename R>
void reduce(const Tensor& out, const Tensor& x, const std::vector<bool>& reduced, const R& r) {
  using A = typename R::acc_t;
  const ReduceGeometry g = make_reduce_geometry(x, reduced);
  Out* dst = out.data<Out>();
  if (g.n_out == 0) return;
  const T* src = g.n_red == 0 ? nullptr : x.data<T>();
  if (g.n_red == 0) {
    for (int64_t o = 0; o < g.n_out; ++o) dst[o] = r.finish(r.init());
    return;
  }
  const int64_t row_grain = std::max<int64_t>(1, kReduceGrain / g.n_red);
  auto outer_off = [&](int64_t o) { return group_offset(g.outer_sizes, g.outer_strides, o); };

  if (!g.red_sizes.empty() && g.red_strides.back() == 1) {
    // inner: contiguous runs of length `run` along the last reduced dim.
    const int64_t run = g.red_sizes.back();
    const IntShape rs(g.red_sizes.begin(), g.red_sizes.end() - 1);
    const IntShape rst(g.red_strides.begin(), g.red_strides.end() - 1);
    const int64_t n_runs = g.n_red / run;
    if (g.n_out == 1 && n_runs == 1 && run >= 2 * kReduceGrain && !in_parallel_region()) {
      // One long row (argmax over a vocabulary): split it over the threads.
      const int64_t chunks = std::min<int64_t>(num_threads(), run / kReduceGrain);
      const int64_t step = (run + chunks - 1) / chunks;
      const T* base = src + outer_off(0);
      std::vector<A> partial(size_t(chunks), r.init());
      parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
        for (int64_t c = cb; c < ce; ++c) {
          const int64_t b = c * step, e = std::min(run, b + step);
          if (b < e) partial[size_t(c)] = reduce_run(r, base + b, e - b, b);
        }
      });
      A acc = r.init();
      for (const A& p : partial) acc = r.merge(acc, p);
      dst[0] = r.finish(acc);
      return;
    }
    parallel_for(0, g.n_out, row_grain, [&](int64_t ob, int64_t oe) {
      for (int64_t o = ob; o < oe; ++o) {
        const T* base = src + outer_off(o);
        A acc = r.init();
        for_each_in_group(rs, rst, 0, n_runs, [&](int64_t off, int64_t lin) {
          acc = r.merge(acc, reduce_run(r, base + off, run, lin * run));
        });
        dst[o] = r.finish(acc);
      }
    });
    return;
  }

  if (!g.outer_sizes.empty() && g.outer_strides.back() == 1) {
    // outer: the last kept dim is contiguous; accumulate whole rows of it.
    const int64_t width = g.outer_sizes.back();
    const IntShape os(g.outer_sizes.begin(), g.outer_sizes.end() - 1);
    const IntShape ost(g.outer_strides.begin(), g.outer_strides.end() - 1);
    constexpr int64_t kCols = 256;  // accumulator columns per task (stays in L1)
    const int64_t col_blocks = (width + kCols - 1) / kCols;
    const int64_t n_tasks = (g.n_out / width) * col_blocks;
    const int64_t task_grain = std::max<int64_t>(1, kReduceGrain / (g.n_red * kCols));
    parallel_for(0, n_tasks, task_grain, [&](int64_t tb, int64_t te) {
      A acc[kCols];
      for (int64_t task = tb; task < te; ++task) {
        const int64_t row = task / col_blocks, c0 = (task % col_blocks) * kCols;
        const int64_t nc = std::min(kCols, width - c0);
        const T* base = src + group_offset(os, ost, row) + c0;
        for (int64_t j = 0; j < nc; ++j) acc[j] = r.init();
        for_each_in_group(g.red_sizes, g.red_strides, 0, g.n_red, [&](int64_t off, int64_t lin) {
          const T* p = base + off;
          for (int64_t j = 0; j < nc; ++j) acc[j] = r.step(acc[j], p[j], lin);
        });
        Out* d = dst + row * width + c0;
        for (int64_t j = 0; j < nc; ++j) d[j] = r.finish(acc[j]);
      }
    });
    return;
  }

  // general: strided walk per output.
  parallel_for(0, g.n_out, row_grain, [&](int64_t ob, int64_t oe) {
    for (int64_t o = ob; o < oe; ++o) {
      const T* base = src + outer_off(o);
      A acc = r.init();
      for_each_in_group(g.red_sizes, g.red_strides, 0, g.n_red,
                        [&](int64_t off, int64_t lin) { acc = r.step(acc, base[off], lin); });
      dst[o] = r.finish(acc);
    }
  });
}

}  // namespace ingot::cpu
