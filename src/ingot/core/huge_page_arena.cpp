#include "ingot/core/huge_page_arena.h"

#include <cstdint>

#include "ingot/core/error.h"
#include "ingot/core/huge_pages.h"

namespace ingot {
namespace {

constexpr size_t kAlignment = 64;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

size_t HugePageArena::footprint(size_t nbytes) {
  return round_up(nbytes == 0 ? 1 : nbytes, kAlignment);
}

HugePageArena::HugePageArena(size_t capacity) : capacity_(round_up(capacity, kHugePageBytes)) {
  if (capacity_ == 0) return;
  void* data = map_huge_pages(capacity_);
  INGOT_CHECK(data != nullptr, Error, "[HugePageArena] cannot map {} bytes", capacity_);
  const size_t bytes = capacity_;
  mapping_ = std::shared_ptr<void>(data, [bytes](void* p) { unmap_huge_pages(p, bytes); });
}

std::shared_ptr<Storage> HugePageArena::allocate(size_t nbytes) {
  const size_t take = footprint(nbytes);
  INGOT_CHECK(take <= capacity_ - used_, Error,
              "[HugePageArena] {} bytes do not fit: {} of {} are used", nbytes, used_, capacity_);
  void* data = static_cast<uint8_t*>(mapping_.get()) + used_;
  used_ += take;
  return Storage::from_huge_page_region(data, nbytes, mapping_);
}

}  // namespace ingot
