// Reductions over contiguous arrays written with independent lanes so that compilers
// auto-vectorise them without -ffast-math (used by softmax rows).
//
// Not here yet: a vectorisable exp. A branch-free Cephes-style expf is easy to write, but
// GCC only vectorises it under -fno-trapping-math (otherwise it jump-threads the range
// clamp), so exp-heavy ops still call libm per element.
#pragma once

#include <cmath>
#include <cstdint>

namespace ingot::cpu {

// Sum and max of p[0, n) with independent lanes, so the loops vectorise (a plain
// running sum cannot be reordered by the compiler). max ignores NaN.
template <typename M>
inline M lane_sum(const M* p, int64_t n) {
  constexpr int64_t kLanes = 16;
  M lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += p[i + k];
  }
  M s = 0;
  for (int64_t k = 0; k < kLanes; ++k) s += lanes[k];
  for (; i < n; ++i) s += p[i];
  return s;
}

template <typename M>
inline M lane_max(const M* p, int64_t n) {
  constexpr int64_t kLanes = 16;
  M lanes[kLanes];
  for (auto& l : lanes) l = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] = p[i + k] > lanes[k] ? p[i + k] : lanes[k];
  }
  M m = -INFINITY;
  for (int64_t k = 0; k < kLanes; ++k) m = lanes[k] > m ? lanes[k] : m;
  for (; i < n; ++i) m = p[i] > m ? p[i] : m;
  return m;
}

}  // namespace ingot::cpu
