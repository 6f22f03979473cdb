// The memory plan of an ExecuTorch method: every planned tensor gets an offset in one
// arena (memory_id 1) such that two tensors whose lifetimes overlap never share bytes.
//
// A tensor lives from the instruction that first writes it to the last instruction that
// reads it (inputs from -1, outputs and state to the end). Placement is greedy by size
// (largest first, XNNPACK's approach): each tensor goes at the lowest aligned offset that
// does not collide with an already placed tensor of overlapping lifetime. Sizes are the
// upper bounds of dynamic shapes.
#pragma once

#include <cstdint>
#include <vector>

namespace ingot::exporters::executorch {

struct PlannedBuffer {
  uint64_t bytes = 0;
  int64_t first = 0;  // first instruction that writes it (-1: before the first)
  int64_t last = 0;   // last instruction that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, in the order given
  uint64_t arena_bytes = 0;       // the planned buffer's size
};

constexpr uint64_t kPlanAlignment = 64;

MemoryPlan plan_memory(const std::vector<PlannedBuffer>& buffers,
                       uint64_t alignment = kPlanAlignment);

}  // namespace ingot::exporters::executorch
