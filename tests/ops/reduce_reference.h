// Double-precision references for reductions and along-dim ops (softmax, cumsum):
// elements are grouped by their kept-dims index, in row-major order within a group.
#pragma once

#include <functional>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::testing {

struct Groups {
  std::vector<std::vector<double>> values;      // per output (row-major over kept dims)
  std::vector<std::vector<int64_t>> positions;  // flat input index of each value
};

inline Groups group_by_kept(const IntShape& sizes, const std::vector<double>& v,
                            const std::vector<bool>& reduced) {
  int64_t n_out = 1;
  for (size_t d = 0; d < sizes.size(); ++d) n_out *= reduced[d] ? 1 : sizes[d];
  Groups g;
  g.values.resize(size_t(n_out));
  g.positions.resize(size_t(n_out));
  IntShape idx(sizes.size(), 0);
  for (int64_t e = 0; e < int64_t(v.size()); ++e) {
    int64_t o = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!reduced[d]) o = o * sizes[d] + idx[d];
    }
    g.values[size_t(o)].push_back(v[size_t(e)]);
    g.positions[size_t(o)].push_back(e);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return g;
}

// Mask of reduced dims; empty `dims` reduces all.
inline std::vector<bool> reduce_mask(int64_t rank, const IntShape& dims) {
  std::vector<bool> m(size_t(rank), dims.empty());
  for (int64_t d : dims) {
    if (rank > 0) m[size_t(d < 0 ? d + rank : d)] = true;
  }
  return m;
}

inline std::vector<double> reference_reduce(
    const IntShape& sizes, const std::vector<double>& v, const std::vector<bool>& reduced,
    const std::function<double(const std::vector<double>&)>& f) {
  Groups g = group_by_kept(sizes, v, reduced);
  std::vector<double> out;
  for (const auto& group : g.values) out.push_back(f(group));
  return out;
}

// f maps a row along `dim` to a row of the same length.
inline std::vector<double> reference_along_dim(
    const IntShape& sizes, const std::vector<double>& v, int64_t dim,
    const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  std::vector<bool> reduced(sizes.size(), false);
  if (!sizes.empty()) reduced[size_t(dim < 0 ? dim + int64_t(sizes.size()) : dim)] = true;
  Groups g = group_by_kept(sizes, v, reduced);
  std::vector<double> out(v.size());
  for (size_t k = 0; k < g.values.size(); ++k) {
    std::vector<double> r = f(g.values[k]);
    for (size_t i = 0; i < r.size(); ++i) out[size_t(g.positions[k][i])] = r[i];
  }
  return out;
}

}  // namespace ingot::testing
