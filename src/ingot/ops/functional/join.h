// Joining and splitting tensors along a dim: cat, stack, split, chunk.
#pragma once

#include <source_location>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/value.h"

namespace ingot {

// Concatenates along dim; inputs are promoted to a common dtype. Sizes must match except
// along dim. Legacy empty tensors of shape [0] are skipped, as torch.cat does.
Tensor cat(const TensorList& tensors, int64_t dim = 0,
    std::source_location where = std::source_location::current());
// Joins equally-shaped tensors along a new dim (in [-rank-1, rank]).
Tensor stack(const TensorList& tensors, int64_t dim = 0,
    std::source_location where = std::source_location::current());

// Views of consecutive pieces of `split_size` along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& t, SymInt split_size, int64_t dim = 0,
    std::source_location where = std::source_location::current());
// Views of pieces with the given sizes, which must sum to the size of dim.
std::vector<Tensor> split(const Tensor& t, const SymIntList& split_sizes, int64_t dim = 0,
    std::source_location where = std::source_location::current());
std::vector<Tensor> split_with_sizes(const Tensor& t, const SymIntList& split_sizes,
                                     int64_t dim = 0,
    std::source_location where = std::source_location::current());
// At most `chunks` views of ceil(size / chunks) along dim, as torch.chunk.
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0,
    std::source_location where = std::source_location::current());

}  // namespace ingot
