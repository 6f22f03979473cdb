// One huge-page mapping cut into storages: memory for many buffers, each smaller than a
// huge page, that live together (a model's small weights).
//
// Why: a buffer under kHugePageBytes cannot get a huge page of its own (core/huge_pages.h),
// so Storage::allocate puts it on the heap in 4 KiB pages. A decode step streams every
// weight once, and on SmolLM2-135M (576-wide layers) the q / k / v / o projections are all
// such buffers: a quarter of the bytes a step reads. Laid side by side in one mapping
// whose whole 2 MiB blocks are huge pages, they stream like the large weights do
// (runtime/passes/small_weights_arena.h measures it).
//
// Invariants: every storage handed out starts on a 64-byte boundary and lies inside the
// mapping; the mapping lives until the arena and every storage cut from it are gone.
#pragma once

#include <cstddef>
#include <memory>

#include "ingot/core/storage.h"

namespace ingot {

class HugePageArena {
 public:
  // Room for `capacity` bytes of allocations, each counted rounded up to 64 bytes
  // (HugePageArena::footprint). The mapping is rounded up to whole huge pages, so every
  // byte of it is eligible for one. Throws Error when the memory cannot be mapped.
  explicit HugePageArena(size_t capacity);

  // What an allocation of `nbytes` uses of the capacity.
  static size_t footprint(size_t nbytes);

  // A writable, zero-filled storage of `nbytes` inside the mapping (on_huge_pages() true
  // where huge pages are enabled). Throws Error when it does not fit in what is left.
  std::shared_ptr<Storage> allocate(size_t nbytes);

  size_t capacity() const { return capacity_; }
  size_t used() const { return used_; }

 private:
  std::shared_ptr<void> mapping_;  // unmaps when the last holder goes
  size_t capacity_ = 0;
  size_t used_ = 0;
};

}  // namespace ingot
