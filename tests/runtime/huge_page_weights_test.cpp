// HugePageWeights (runtime/huge_page_weights.h): large weights viewed from a mapped file
// move to huge-page copies with the same values and geometry; tensors sharing a storage
// share one copy, also across programs; small or owned weights stay where they are.
#include "ingot/runtime/huge_page_weights.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "ingot/core/huge_pages.h"

namespace ingot {
namespace {

TEST(HugePageWeights, MappedWeightsMoveToSharedHugePageCopies) {
  if (!huge_pages_enabled()) GTEST_SKIP() << "INGOT_HUGE_PAGES=0 in the environment";
  // A weights file: 3 MiB + 4 KiB of floats, value i at index i.
  const int64_t big = int64_t(3 * kHugePageBytes / 4), small = 1024;
  std::vector<float> values(size_t(big + small));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  const auto path = std::filesystem::temp_directory_path() /
                    ("ingot_huge_page_weights_" + std::to_string(::getpid()) + ".bin");
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
  }
  auto file = MappedFile::open(path.string());
  std::filesystem::remove(path);
  auto big_region = Storage::from_mapped_file(file, 0, size_t(big) * 4);
  auto small_region = Storage::from_mapped_file(file, size_t(big) * 4, size_t(small) * 4);

  ExportedProgram a;
  a.state["w"] = Tensor::from_storage(big_region, DType::F32, {big / 1024, 1024}, {1024, 1}, 0);
  // A transposed view at an offset of the same storage (a tied weight, a slice).
  a.state["w_t"] = Tensor::from_storage(big_region, DType::F32, {1024, 8}, {1, 1024}, 2048);
  a.state["norm"] = Tensor::from_storage(small_region, DType::F32, {small}, {1}, 0);
  a.constants["owned"] = Tensor::empty({big}, DType::F32);
  ExportedProgram b;
  b.state["lm_head"] = a.state["w"];

  runtime::HugePageWeights weights;
  const ExportedProgram ma = weights.apply(a);
  const ExportedProgram mb = weights.apply(b);
  EXPECT_EQ(weights.copied_bytes(), big * 4) << "one copy of the shared storage";

  const Tensor& w = ma.state.at("w");
  EXPECT_FALSE(w.storage()->is_mapped());
  EXPECT_TRUE(w.storage()->on_huge_pages());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data<float>()) % kHugePageBytes, 0u);
  EXPECT_EQ(w.sizes(), a.state.at("w").sizes());
  for (int64_t i = 0; i < big; i += 997) ASSERT_EQ(w.data<float>()[i], float(i)) << i;
  EXPECT_EQ(w.data<float>()[big - 1], float(big - 1));

  const Tensor& wt = ma.state.at("w_t");
  EXPECT_EQ(wt.storage(), w.storage()) << "views of one storage share its copy";
  EXPECT_EQ(wt.strides(), (IntShape{1, 1024}));
  EXPECT_EQ(wt.storage_offset(), 2048);
  EXPECT_EQ(mb.state.at("lm_head").storage(), w.storage()) << "shared across programs";

  EXPECT_EQ(ma.state.at("norm").storage(), small_region) << "small weights stay mapped";
  EXPECT_EQ(ma.constants.at("owned").storage(), a.constants.at("owned").storage());
  // The source programs are untouched (and still read their mapped pages correctly
  // after the copy released them from memory).
  EXPECT_EQ(a.state.at("w").storage(), big_region);
  EXPECT_EQ(a.state.at("w").data<float>()[big - 5], float(big - 5));
}

}  // namespace
}  // namespace ingot
