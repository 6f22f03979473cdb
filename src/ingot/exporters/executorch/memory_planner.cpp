#include "ingot/exporters/executorch/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace ingot::exporters::executorch {

namespace {

uint64_t align_up(uint64_t n, uint64_t a) {
  return (n + a - 1) / a * a;
}

bool overlaps(const PlannedBuffer& a, const PlannedBuffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<PlannedBuffer>& buffers, uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start, then index (a deterministic plan).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const PlannedBuffer& t = buffers[i];
    const uint64_t size = align_up(std::max<uint64_t>(t.bytes, 1), alignment);
    // The live neighbours, by offset; the first gap that fits wins.
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end)
    for (size_t j : placed) {
      if (overlaps(t, buffers[j]))
        busy.emplace_back(
            plan.offsets[j],
            plan.offsets[j] + align_up(std::max<uint64_t>(buffers[j].bytes, 1), alignment));
    }
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (const auto& [begin, end] : busy) {
      if (at + size <= begin) break;
      at = std::max(at, end);
    }
    plan.offsets[i] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + size);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace ingot::exporters::executorch
