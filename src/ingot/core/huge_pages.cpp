#include "ingot/core/huge_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ingot {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t page_rounded(size_t nbytes) {
  return round_up(nbytes == 0 ? 1 : nbytes, size_t(::sysconf(_SC_PAGESIZE)));
}

}  // namespace

bool huge_pages_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("INGOT_HUGE_PAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

void* map_huge_pages(size_t nbytes) {
  const size_t bytes = page_rounded(nbytes);
  // Map one huge page more than needed, then unmap the unaligned head and the tail so
  // what stays starts on a 2 MiB boundary.
  const size_t span = bytes + kHugePageBytes;
  void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = round_up(base, kHugePageBytes);
  if (aligned > base) ::munmap(raw, aligned - base);
  const size_t tail = (base + span) - (aligned + bytes);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  void* data = reinterpret_cast<void*>(aligned);
  if (huge_pages_enabled()) ::madvise(data, bytes, MADV_HUGEPAGE);
  return data;
}

void unmap_huge_pages(void* data, size_t nbytes) {
  if (data != nullptr) ::munmap(data, page_rounded(nbytes));
}

void release_mapped_pages(const void* data, size_t nbytes) {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const auto begin = round_up(reinterpret_cast<uintptr_t>(data), page);
  const auto end = (reinterpret_cast<uintptr_t>(data) + nbytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void advise_huge_pages(const void* data, size_t nbytes) {
  if (!huge_pages_enabled() || data == nullptr || nbytes < kHugePageBytes) return;
  // madvise wants a page-aligned start; mmap's results are.
  ::madvise(const_cast<void*>(data), nbytes, MADV_HUGEPAGE);
}

}  // namespace ingot
