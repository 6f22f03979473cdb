// Fused ops the runtime's rewrites put into programs (runtime/passes/fuse_silu_mul.h); models do
// not call them. Each has a decomposition into the ops it replaces.
#pragma once

#include <source_location>

#include "ingot/core/tensor.h"

namespace ingot {

// ingot::silu_mul: silu(gate) * up, the gated MLP's activation in one pass over memory.
// gate and up of one floating dtype and the same shape; computed in float, rounded once.
Tensor silu_mul(const Tensor& gate, const Tensor& up,
                std::source_location where = std::source_location::current());

}  // namespace ingot
