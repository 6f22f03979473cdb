#include "ingot/core/storage.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace ingot
