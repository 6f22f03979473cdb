// Reductions (sum, mean, amax, amin, argmax, argmin), softmax / log_softmax and cumsum.
//
// A dim list may hold negative dims; an empty list (or none) reduces every dim.
#pragma once

#include <source_location>
#include <optional>

#include "ingot/core/tensor.h"

namespace ingot {

// Sum of all elements (0-d). Integer and bool inputs sum to int64 unless dtype is
// given; with dtype the input is converted to it first.
Tensor sum(const Tensor& self, std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());
Tensor sum(const Tensor& self, IntShape dims, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());
// Floating inputs (or a floating dtype) only; the mean of nothing is NaN.
Tensor mean(const Tensor& self, std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());
Tensor mean(const Tensor& self, IntShape dims, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());
// Max / min over dims (NaN propagates); reduced dims must not be empty.
Tensor amax(const Tensor& self, IntShape dims = {}, bool keepdim = false,
    std::source_location where = std::source_location::current());
Tensor amin(const Tensor& self, IntShape dims = {}, bool keepdim = false,
    std::source_location where = std::source_location::current());
// int64 index of the first max / min (NaN counts as the extreme) along dim, or over the
// flattened tensor when dim is absent.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
    std::source_location where = std::source_location::current());
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
    std::source_location where = std::source_location::current());

// softmax / log_softmax along dim, computed in float for 16-bit inputs. With dtype the
// input is converted to it first (the result has that dtype). A row of all -inf gives NaN.
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());

// Inclusive prefix sum along dim; integer and bool inputs give int64 unless dtype is given.
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt,
    std::source_location where = std::source_location::current());

}  // namespace ingot
