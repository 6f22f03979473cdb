// HugePageWeights (runtime/passes/huge_page_weights.h): large weights viewed from a mapped file
// move to huge-page copies with the same values and geometry (small ones to heap copies);
// tensors sharing a storage share one copy, also across programs; owned weights stay.
#include "ingot/runtime/passes/huge_page_weights.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "ingot/core/huge_pages.h"

namespace ingot {
namespace {

// A mapped file of `values`, removed from the directory at once (the mapping stays).
std::shared_ptr<MappedFile> mapped_floats(const std::vector<float>& values, const char* tag) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("ingot_huge_page_weights_" + std::string(tag) + "_" + std::to_string(::getpid()) + ".bin");
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(values.data()), std::streamsize(values.size() * 4));
  }
  auto file = MappedFile::open(path.string());
  std::filesystem::remove(path);
  return file;
}

TEST(HugePageWeights, MappedWeightsMoveToSharedHugePageCopies) {
  if (!huge_pages_enabled()) GTEST_SKIP() << "INGOT_HUGE_PAGES=0 in the environment";
  // A weights file: 3 MiB + 4 KiB of floats, value i at index i.
  const int64_t big = int64_t(3 * kHugePageBytes / 4), small = 1024;
  std::vector<float> values(size_t(big + small));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  auto file = mapped_floats(values, "one");
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
  EXPECT_EQ(weights.copied_bytes(), (big + small) * 4) << "one copy of the shared storage";

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

  const Tensor& norm = ma.state.at("norm");
  EXPECT_FALSE(norm.storage()->is_mapped()) << "small weights are copied too (to the heap)";
  EXPECT_FALSE(norm.storage()->on_huge_pages());
  EXPECT_EQ(norm.data<float>()[small - 1], float(big + small - 1));
  EXPECT_EQ(ma.constants.at("owned").storage(), a.constants.at("owned").storage());
  // The source programs are untouched (and still read their mapped pages correctly
  // after the copy released them from memory).
  EXPECT_EQ(a.state.at("w").storage(), big_region);
  EXPECT_EQ(a.state.at("w").data<float>()[big - 5], float(big - 5));
}

// A generation directory's prefill.ingot and decode.ingot each store the weights: the
// same-named tensors of the two files, byte-equal, end up on one copy (with
// INGOT_HUGE_PAGES=0, on the first file's mapping); a different name or different bytes
// keep their own.
TEST(HugePageWeights, EqualWeightsOfTwoFilesShareOneCopy) {
  const int64_t n = int64_t(kHugePageBytes / 4);  // 2 MiB of floats
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 4099) * 0.5f;
  std::vector<float> changed = values;
  changed.back() += 1.0f;
  auto first = mapped_floats(values, "first"), second = mapped_floats(values, "second"),
       third = mapped_floats(changed, "third");
  auto tensor_of = [&](const std::shared_ptr<MappedFile>& f) {
    return Tensor::from_storage(Storage::from_mapped_file(f, 0, size_t(n) * 4), DType::F32,
                                {n / 1024, 1024}, {1024, 1}, 0);
  };
  ExportedProgram decode, prefill, other;
  decode.state["w"] = tensor_of(first);
  prefill.state["w"] = tensor_of(second);
  prefill.state["w_renamed"] = tensor_of(second);
  other.state["w"] = tensor_of(third);

  runtime::HugePageWeights weights;
  const ExportedProgram d = weights.apply(decode);
  const ExportedProgram p = weights.apply(prefill);
  const ExportedProgram o = weights.apply(other);
  const Tensor& w = d.state.at("w");
  EXPECT_EQ(p.state.at("w").storage(), w.storage()) << "same name, same bytes: one copy";
  EXPECT_NE(p.state.at("w_renamed").storage(), w.storage()) << "same bytes, other name";
  EXPECT_NE(o.state.at("w").storage(), w.storage()) << "same name, other bytes";
  EXPECT_EQ(o.state.at("w").data<float>()[n - 1], changed.back());
  EXPECT_EQ(weights.shared_bytes(), n * 4);
  if (huge_pages_enabled()) {
    EXPECT_EQ(weights.copied_bytes(), 3 * n * 4) << "w (first file), w_renamed, w (third file)";
    EXPECT_TRUE(w.storage()->on_huge_pages());
  } else {
    EXPECT_EQ(w.storage(), decode.state.at("w").storage()) << "the first mapping is kept";
  }
  for (int64_t i = 0; i < n; i += 1013)
    ASSERT_EQ(p.state.at("w").data<float>()[i], values[size_t(i)]);
}

}  // namespace
}  // namespace ingot
