// Creating tensors (arange, full, zeros, ones, empty) and triangle masks (triu, tril).
//
// Sizes come as plain IntShape; the *_symint forms take symbolic sizes (export).
#pragma once

#include <source_location>
#include <optional>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"
#include "ingot/ops/value.h"

namespace ingot {

// [0, end) in steps of 1. Without a dtype: int64 when every bound is an integer, else
// float32.
Tensor arange(Scalar end, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
// [start, end) in steps of `step`: ceil((end - start) / step) elements. Throws on a zero
// step or one whose sign does not lead from start to end.
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
// [0, end) and [start, end) in steps of 1 over sizes that may be symbolic (export: the
// length is end - start, e.g. position ids for a dynamic sequence length). Eager, they are
// arange over plain ints. Without a dtype: int64.
Tensor arange_symint(const SymInt& end, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor arange_symint(const SymInt& start, const SymInt& end, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());

// Without a dtype: bool, int64 or float32 following the kind of fill_value.
Tensor full(const IntShape& size, Scalar fill_value, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor full_symint(const SymIntList& size, Scalar fill_value, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
// Without a dtype: float32.
Tensor zeros(const IntShape& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor zeros_symint(const SymIntList& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor ones(const IntShape& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor ones_symint(const SymIntList& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
// Contents unspecified (zeros in eager mode).
Tensor empty(const IntShape& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());
Tensor empty_symint(const SymIntList& size, std::optional<DType> dtype = {},
    std::source_location where = std::source_location::current());

// Upper / lower triangle of the last two dims (batched): element [i, j] is kept where
// j - i >= diagonal (triu) or j - i <= diagonal (tril), zero elsewhere.
Tensor triu(const Tensor& t, int64_t diagonal = 0,
    std::source_location where = std::source_location::current());
Tensor tril(const Tensor& t, int64_t diagonal = 0,
    std::source_location where = std::source_location::current());

}  // namespace ingot
