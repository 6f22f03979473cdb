// Storage: a reference-counted byte buffer that tensors view.
//
// Either owned (64-byte aligned heap memory, zero-filled on request; buffers of 2 MiB and
// more are huge-page mappings, see huge_pages.h) or borrowed from
// something that keeps it alive: a read-only mmap of a file region (weights, artifacts),
// or caller-provided memory. Borrowed read-only storage is never written: kernels that
// write check writable() through Tensor::check_writable().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ingot {

// A whole file mapped read-only into memory. Regions of it become Storages that keep
// the mapping alive.
class MappedFile {
 public:
  // Throws IoError naming the path when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

class Storage {
 public:
  // Owned, 64-byte aligned memory of nbytes (zeroed when zero_fill).
  static std::shared_ptr<Storage> allocate(size_t nbytes, bool zero_fill = false);
  // nbytes at offset inside a mapped file; throws IoError if the region is outside it.
  static std::shared_ptr<Storage> from_mapped_file(std::shared_ptr<MappedFile> file,
                                                   size_t offset, size_t nbytes);
  // External memory kept alive by `owner`.
  static std::shared_ptr<Storage> from_external(void* data, size_t nbytes,
                                                std::shared_ptr<void> owner, bool writable);
  // Writable memory inside a huge-page mapping (map_huge_pages) kept alive by `mapping`:
  // a piece of a HugePageArena (core/huge_page_arena.h); on_huge_pages() is true.
  static std::shared_ptr<Storage> from_huge_page_region(void* data, size_t nbytes,
                                                        std::shared_ptr<void> mapping);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  bool writable() const { return writable_; }
  bool is_mapped() const { return mapped_ != nullptr; }
  // Memory from map_huge_pages (huge_pages.h), owned or a HugePageArena's, rather than
  // the heap or a file.
  bool on_huge_pages() const { return huge_mapped_ || in_huge_page_region_; }

  // Bytes currently held by owned storages in this process (for memory tests).
  static int64_t live_owned_bytes();
  // Number of owned allocations made so far in this process (for "no allocation per
  // step" tests).
  static int64_t allocation_count();
  // Bytes of all owned allocations made so far (monotonic).
  static int64_t allocated_bytes_total();

 private:
  Storage() = default;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  bool writable_ = true;
  bool owned_ = false;
  bool huge_mapped_ = false;  // owned memory from map_huge_pages, not the heap
  bool in_huge_page_region_ = false;  // borrowed from a huge-page mapping (owner_ keeps it)
  std::shared_ptr<MappedFile> mapped_;
  std::shared_ptr<void> owner_;
};

}  // namespace ingot
