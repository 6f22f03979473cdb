// Shared helpers of the GEMM/GEMV benchmarks: the memory-bandwidth figure the GEMV
// benchmarks are measured against, and cached random operands.
#pragma once

#include <cstdint>
#include <vector>

#include "ingot/core/dtype.h"

namespace ingot::bench {

// Streaming-read bandwidth of a 1 GiB buffer over all pool threads, in GB/s (1e9 B/s),
// best of several passes. Measured on first call and cached; `fresh` measures again
// (best of 3) and updates the cache. This machine's bandwidth drifts with its neighbours,
// so GEMV benchmarks compare against a fresh figure taken right after their own loop.
double read_bandwidth_gbs(bool fresh = false);

// A random [rows, cols] matrix in `dtype` (values in [-1, 1]), created once per
// (rows, cols, dtype) and kept for the process lifetime.
const void* random_matrix(int64_t rows, int64_t cols, DType dtype);

}  // namespace ingot::bench
