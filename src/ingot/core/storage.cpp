#include "ingot/core/storage.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "ingot/core/error.h"
#include "ingot/core/huge_pages.h"

namespace ingot {
namespace {

std::atomic<int64_t> g_live_owned_bytes{0};
std::atomic<int64_t> g_allocation_count{0};
std::atomic<int64_t> g_allocated_bytes_total{0};
constexpr size_t kAlignment = 64;

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  INGOT_CHECK(fd >= 0, IoError, "[MappedFile] cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    INGOT_THROW(IoError, "[MappedFile] '{}' is not a regular file", path);
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = size_t(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      INGOT_THROW(IoError, "[MappedFile] cannot map '{}': {}", path, std::strerror(err));
    }
    file->data_ = static_cast<const uint8_t*>(p);
    advise_huge_pages(p, file->size_);  // weights are streamed whole (huge_pages.h)
  }
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, bool zero_fill) {
  std::shared_ptr<Storage> s(new Storage());
  // Round up so aligned_alloc's size requirement holds; allocate at least one line so
  // data() is never null (size-0 tensors still get a valid pointer).
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  if (rounded >= kHugePageBytes) {
    // Large buffers (weights, caches, pooled activations) on huge pages; already zero.
    s->data_ = map_huge_pages(rounded);
    s->huge_mapped_ = s->data_ != nullptr;
  }
  if (s->data_ == nullptr) {
    s->data_ = std::aligned_alloc(kAlignment, rounded);
    INGOT_CHECK(s->data_ != nullptr, Error, "[Storage] out of memory allocating {} bytes",
                nbytes);
    if (zero_fill) std::memset(s->data_, 0, rounded);
  }
  s->nbytes_ = nbytes;
  s->owned_ = true;
  g_live_owned_bytes += int64_t(nbytes);
  ++g_allocation_count;
  g_allocated_bytes_total += int64_t(nbytes);
  return s;
}

std::shared_ptr<Storage> Storage::from_mapped_file(std::shared_ptr<MappedFile> file,
                                                   size_t offset, size_t nbytes) {
  INGOT_CHECK(offset <= file->size() && nbytes <= file->size() - offset, IoError,
              "[Storage] region [{}, {}) lies outside '{}' ({} bytes)", offset,
              offset + nbytes, file->path(), file->size());
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = const_cast<uint8_t*>(file->data()) + offset;
  s->nbytes_ = nbytes;
  s->writable_ = false;
  s->mapped_ = std::move(file);
  return s;
}

std::shared_ptr<Storage> Storage::from_external(void* data, size_t nbytes,
                                                std::shared_ptr<void> owner, bool writable) {
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->nbytes_ = nbytes;
  s->writable_ = writable;
  s->owner_ = std::move(owner);
  return s;
}

std::shared_ptr<Storage> Storage::from_huge_page_region(void* data, size_t nbytes,
                                                        std::shared_ptr<void> mapping) {
  std::shared_ptr<Storage> s = from_external(data, nbytes, std::move(mapping), /*writable=*/true);
  s->in_huge_page_region_ = true;
  return s;
}

Storage::~Storage() {
  if (owned_) {
    if (huge_mapped_) {
      unmap_huge_pages(data_, (nbytes_ + kAlignment - 1) / kAlignment * kAlignment);
    } else {
      std::free(data_);
    }
    g_live_owned_bytes -= int64_t(nbytes_);
  }
}

int64_t Storage::live_owned_bytes() { return g_live_owned_bytes.load(); }
int64_t Storage::allocation_count() { return g_allocation_count.load(); }
int64_t Storage::allocated_bytes_total() { return g_allocated_bytes_total.load(); }

}  // namespace ingot
