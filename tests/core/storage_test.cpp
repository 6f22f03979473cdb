#include "ingot/core/storage.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "ingot/core/huge_page_arena.h"
#include "ingot/core/huge_pages.h"
#include "ingot/core/tensor.h"

namespace ingot {
namespace {

std::string write_temp_file(const std::vector<float>& values) {
  auto path = std::filesystem::temp_directory_path() /
              ("ingot_storage_test_" + std::to_string(::getpid()) + ".bin");
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
  return path.string();
}

TEST(Storage, MappedRegionIsZeroCopyAndReadOnly) {
  std::string path = write_temp_file({0, 1, 2, 3, 4, 5, 6, 7});
  auto file = MappedFile::open(path);
  std::filesystem::remove(path);  // the mapping keeps the data alive
  EXPECT_EQ(file->size(), 32u);
  auto region = Storage::from_mapped_file(file, 8, 24);  // floats 2..7
  EXPECT_EQ(region->data(), file->data() + 8);          // no copy
  EXPECT_FALSE(region->writable());
  Tensor t = Tensor::from_storage(region, DType::F32, {2, 3}, {3, 1}, 0);
  EXPECT_EQ(t.to_string(), "Tensor(float32, [2, 3], [2, 3, 4, 5, 6, 7])");
  EXPECT_THROW(t.check_writable("copy_"), ValueError);
  EXPECT_THROW(Storage::from_mapped_file(file, 16, 17), IoError);
  EXPECT_THROW(Tensor::from_storage(region, DType::F32, {2, 4}, {4, 1}, 0), ShapeError);
}

TEST(Storage, MissingFileIsIoErrorNamingPath) {
  try {
    MappedFile::open("/nonexistent/weights.safetensors");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/weights.safetensors"), std::string::npos);
  }
}

TEST(Storage, OwnedBytesAreTracked) {
  int64_t before = Storage::live_owned_bytes();
  {
    auto s = Storage::allocate(1000, /*zero_fill=*/true);
    EXPECT_EQ(Storage::live_owned_bytes() - before, 1000);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % 64, 0u);
    EXPECT_EQ(static_cast<uint8_t*>(s->data())[999], 0);
  }
  EXPECT_EQ(Storage::live_owned_bytes(), before);
}

// The AnonHugePages kB of this process's mapping that contains `p` (/proc/self/smaps).
int64_t anon_huge_kb_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2) {  // a mapping's header line
      inside = lo <= addr && addr < hi;
      continue;
    }
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) return kb;
  }
  return 0;
}

// Whether the kernel grants MADV_HUGEPAGE requests ("[always]" or "[madvise]").
bool kernel_grants_huge_pages() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(f, mode);
  return mode.find("[always]") != std::string::npos ||
         mode.find("[madvise]") != std::string::npos;
}

TEST(Storage, LargeBuffersAreZeroedHugePageMappings) {
  const size_t nbytes = 3 * kHugePageBytes + 100;
  const int64_t before = Storage::live_owned_bytes();
  {
    auto s = Storage::allocate(nbytes, /*zero_fill=*/true);
    EXPECT_TRUE(s->on_huge_pages());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % kHugePageBytes, 0u);
    EXPECT_EQ(Storage::live_owned_bytes() - before, int64_t(nbytes));
    auto* bytes = static_cast<uint8_t*>(s->data());
    for (size_t i = 0; i < nbytes; i += 4093) ASSERT_EQ(bytes[i], 0) << i;
    EXPECT_EQ(bytes[nbytes - 1], 0);
    std::memset(bytes, 7, nbytes);  // the whole range is writable
    if (kernel_grants_huge_pages() && huge_pages_enabled()) {
      // The three whole 2 MiB blocks are huge pages (the kernel may fall back to small
      // pages when memory is fragmented; this machine's tests run with memory free).
      EXPECT_GE(anon_huge_kb_at(s->data()), 2048) << "no huge page backs the buffer";
    }
  }
  EXPECT_EQ(Storage::live_owned_bytes(), before);
  EXPECT_FALSE(Storage::allocate(kHugePageBytes - 64)->on_huge_pages());  // heap
}

// A HugePageArena cuts one mapping into 64-byte aligned, zeroed, writable storages laid
// side by side; the mapping (whole huge pages) outlives the arena while a storage holds
// it; what does not fit is an error naming the sizes.
TEST(HugePageArena, CutsOneHugePageMappingIntoAlignedStorages) {
  const std::vector<size_t> sizes = {100, 576 * 4, 1, 300 * 1024};
  size_t capacity = 0;
  for (size_t n : sizes) capacity += HugePageArena::footprint(n);
  EXPECT_EQ(HugePageArena::footprint(100), 128u);
  std::vector<std::shared_ptr<Storage>> parts;
  {
    HugePageArena arena(capacity);
    EXPECT_EQ(arena.capacity(), kHugePageBytes) << "rounded up to whole huge pages";
    for (size_t n : sizes) parts.push_back(arena.allocate(n));
    EXPECT_EQ(arena.used(), capacity);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(parts[0]->data()) % kHugePageBytes, 0u);
    try {
      arena.allocate(kHugePageBytes);
      ADD_FAILURE() << "an allocation past the capacity was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(kHugePageBytes)), std::string::npos)
          << e.what();
    }
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto* bytes = static_cast<uint8_t*>(parts[i]->data());
    EXPECT_EQ(parts[i]->nbytes(), sizes[i]);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(bytes) % 64, 0u);
    EXPECT_TRUE(parts[i]->writable());
    EXPECT_TRUE(parts[i]->on_huge_pages());
    EXPECT_EQ(bytes[sizes[i] - 1], 0);
    if (i > 0)
      EXPECT_EQ(bytes, static_cast<uint8_t*>(parts[i - 1]->data()) +
                           HugePageArena::footprint(sizes[i - 1]))
          << "side by side";
  }
  // The arena is gone; its storages still write and read their memory.
  std::memset(parts[3]->data(), 5, sizes[3]);
  EXPECT_EQ(static_cast<uint8_t*>(parts[3]->data())[sizes[3] - 1], 5);
  if (kernel_grants_huge_pages() && huge_pages_enabled())
    EXPECT_GE(anon_huge_kb_at(parts[0]->data()), 2048) << "no huge page backs the arena";
}

}  // namespace
}  // namespace ingot
