// T5ForConditionalGeneration (transformers' modeling_t5.py) pieces that tests reach:
// the relative-position bucket table. The model itself registers in t5.cpp.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot::models {

// T5's bucket of every relative position r = key - query in [-max_distance, max_distance]
// (index r + max_distance), as T5Attention._relative_position_bucket computes it (in
// float32, like torch): bidirectional (encoder) or causal (decoder, r > 0 -> bucket 0).
// Every |r| >= max_distance falls in the last bucket of its side, so clamping r to
// [-max_distance, max_distance] and reading this table is exact for any distance.
std::vector<int64_t> t5_relative_position_buckets(bool bidirectional, int64_t num_buckets,
                                                  int64_t max_distance);

}  // namespace ingot::models
