// Memory for large long-lived buffers (weights, the KV cache, pooled activations) backed
// by 2 MiB transparent huge pages where the kernel allows them.
//
// Why: a decode step streams every weight once, and with 4 KiB pages every page costs a
// TLB walk and the hardware prefetchers restart at each page boundary. Together with the
// one-row GEMV (ops/cpu/gemm_kernels_avx512.cpp) huge pages took the bf16 decode of the
// Qwen3-0.6B shape from 12.1 to 21.4 tok/s on this 2-core EPYC (docs/runtime.md). Linux
// here runs THP in "madvise" mode: memory gets huge pages only when asked for with
// MADV_HUGEPAGE.
//
// INGOT_HUGE_PAGES=0 turns the advice off (for A/B benchmarks); the buffers are then
// plain anonymous mappings.
#pragma once

#include <cstddef>

namespace ingot {

// False when the environment sets INGOT_HUGE_PAGES=0.
bool huge_pages_enabled();

// Buffers at least this large are mapped by map_huge_pages; smaller ones stay on the heap.
inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// Zero-filled anonymous memory of `nbytes` (rounded up to whole 4 KiB pages), aligned to
// kHugePageBytes and advised for huge pages; nullptr when the mapping fails. The aligned
// 2 MiB blocks inside get huge pages, a partial block at the end stays in 4 KiB pages.
void* map_huge_pages(size_t nbytes);
// Releases memory from map_huge_pages(nbytes).
void unmap_huge_pages(void* data, size_t nbytes);

// For a read-only file mapping only: drops this process's mappings of the whole pages
// inside [data, data + nbytes) (they stay in the page cache and fault back in on the
// next read), so memory copied elsewhere is not resident twice.
void release_mapped_pages(const void* data, size_t nbytes);

// Advises an existing mapping (e.g. a weights file mapped read-only) for huge pages; a
// no-op where the kernel refuses.
void advise_huge_pages(const void* data, size_t nbytes);

}  // namespace ingot
