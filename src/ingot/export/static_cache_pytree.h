// nn::StaticCache as a pytree (ir/pytree.h): its named tensors (key_cache.N,
// value_cache.N, cache_position) are the leaves, so a program traced on a cache takes
// them as inputs and its in-place writes become USER_INPUT_MUTATION outputs, which the
// runtime performs in place. Including this header also installs the cache's room check
// for tracing: under the tracer it becomes runtime asserts (batch <= max_batch,
// position + new_tokens <= max_cache_len) instead of guards on one example.
#pragma once

#include "ingot/ir/pytree.h"
#include "ingot/nn/static_cache.h"

template <>
struct ingot::Pytree<ingot::nn::StaticCache> {
  static TreeSpec flatten(const nn::StaticCache& cache, Flattener& f);
  static nn::StaticCache unflatten(const TreeSpec& spec, Unflattener& u);
};
