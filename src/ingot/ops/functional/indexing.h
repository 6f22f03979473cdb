// Indexing: reading and writing at index positions (index_select, gather, scatter,
// index_put, index_copy, embedding) and the functional writes into views
// (slice_scatter, select_scatter).
//
// Index tensors are int64 or int32. An index out of range is a ValueError naming the op,
// the index, the dim and its size. Only index_put wraps negative indices (Python
// advanced indexing does); the others reject them, as torch does.
#pragma once

#include <source_location>
#include <optional>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"
#include "ingot/ops/value.h"

namespace ingot {

// out = self with dim's entries picked by a 0-d or 1-d index: out.size(dim) = numel(index).
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index,
    std::source_location where = std::source_location::current());
// out[i][j][k] = self[index[i][j][k]][j][k] (dim 0); out has index's shape.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index,
    std::source_location where = std::source_location::current());
// out = copy of self with out[index[i][j][k]][j][k] = src[i][j][k] (dim 0).
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
    std::source_location where = std::source_location::current());
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
    std::source_location where = std::source_location::current());

// out = copy of self with self[indices] = values, Python advanced indexing: one entry per
// leading dim, nullopt for a full slice (`cache[:, :, pos] = v` is {{}, {}, pos}), a bool
// tensor for a mask. values must have self's dtype and broadcast to the indexed shape.
// With accumulate, values add into self (repeated indices add up).
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false,
    std::source_location where = std::source_location::current());
// In place; returns self.
Tensor index_put_(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                  const Tensor& values, bool accumulate = false,
    std::source_location where = std::source_location::current());

// out = copy of self with out[..., index[i], ...] = source[..., i, ...] along dim.
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
    std::source_location where = std::source_location::current());
// In place; returns self.
Tensor index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
    std::source_location where = std::source_location::current());

// Rows of a [num_embeddings, embedding_dim] weight: out = indices.shape + [embedding_dim].
// padding_idx only matters for gradients.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
    std::source_location where = std::source_location::current());

// out = copy of self with slice(out, dim, start, end, step) replaced by src (whose shape
// must be the slice's shape).
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0,
                     std::optional<SymInt> start = std::nullopt,
                     std::optional<SymInt> end = std::nullopt, SymInt step = 1,
    std::source_location where = std::source_location::current());
// out = copy of self with select(out, dim, index) replaced by src.
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, SymInt index,
    std::source_location where = std::source_location::current());

}  // namespace ingot
