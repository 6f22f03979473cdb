#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

Tensor iota(const IntShape& sizes, DType dtype = DType::F32) {
  return testing::make_tensor(sizes, dtype, [](int64_t i) { return double(i); });
}

TEST(Views, ViewInfersMinusOneAndShares) {
  Tensor t = iota({2, 3, 4});
  Tensor v = view(t, {SymInt(6), SymInt(-1)});
  EXPECT_EQ(v.sizes(), (IntShape{6, 4}));
  EXPECT_TRUE(v.shares_storage_with(t));
  EXPECT_EQ(values(v), values(t));
  EXPECT_THROW(view(t, {SymInt(5), SymInt(-1)}), ShapeError);
  EXPECT_THROW(view(t, {SymInt(-1), SymInt(-1)}), ValueError);
}

TEST(Views, ViewOfTransposedNeedsReshape) {
  Tensor t = transpose(iota({3, 4}), 0, 1);  // [4, 3], strides [1, 4]
  EXPECT_THROW(view(t, {SymInt(12)}), ShapeError);
  Tensor r = reshape(t, {SymInt(12)});
  EXPECT_FALSE(r.shares_storage_with(t));
  EXPECT_EQ(values(r), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // Splitting a dim of a transposed tensor is still a view.
  Tensor s = view(t, {SymInt(2), SymInt(2), SymInt(3)});
  EXPECT_TRUE(s.shares_storage_with(t));
  EXPECT_EQ(values(s), values(t));
}

TEST(Views, PermuteTransposeMatchIndexing) {
  Tensor t = iota({2, 3, 4});
  Tensor p = permute(t, {2, 0, 1});
  EXPECT_EQ(p.sizes(), (IntShape{4, 2, 3}));
  auto v = values(p);
  // p[k, i, j] == t[i, j, k] == i*12 + j*4 + k
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(v[size_t(k * 6 + i * 3 + j)], i * 12 + j * 4 + k);
  EXPECT_THROW(permute(t, {0, 0, 1}), ValueError);
  EXPECT_THROW(permute(t, {0, 1}), ShapeError);
}

TEST(Views, SliceClampsLikePython) {
  Tensor t = iota({10});
  EXPECT_EQ(values(slice(t, 0, 2, 8, 3)), (std::vector<double>{2, 5}));
  EXPECT_EQ(values(slice(t, 0, -3, std::nullopt)), (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(slice(t, 0, 5, 100).numel(), 5);
  EXPECT_EQ(slice(t, 0, 8, 2).numel(), 0);
  EXPECT_THROW(slice(t, 0, 0, 5, 0), ValueError);
  Tensor m = iota({4, 5});
  Tensor s = slice(m, 1, 1, 3);
  EXPECT_EQ(values(s), (std::vector<double>{1, 2, 6, 7, 11, 12, 16, 17}));
}

TEST(Views, SelectNarrowUnsqueezeSqueeze) {
  Tensor t = iota({3, 4});
  EXPECT_EQ(values(select(t, 1, -1)), (std::vector<double>{3, 7, 11}));
  EXPECT_THROW(select(t, 0, 3), ValueError);
  EXPECT_EQ(values(narrow(t, 0, 1, 2)), (std::vector<double>{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_THROW(narrow(t, 0, 2, 2), ValueError);
  Tensor u = unsqueeze(t, -1);
  EXPECT_EQ(u.sizes(), (IntShape{3, 4, 1}));
  EXPECT_EQ(squeeze(u).sizes(), (IntShape{3, 4}));
  EXPECT_EQ(squeeze(u, 0).sizes(), (IntShape{3, 4, 1}));  // size 3: unchanged
  EXPECT_EQ(unsqueeze(Tensor::scalar<float>(1), 0).sizes(), (IntShape{1}));
}

TEST(Views, ExpandBroadcastsWithZeroStride) {
  Tensor t = iota({3, 1});
  Tensor e = expand(t, {SymInt(2), SymInt(3), SymInt(4)});
  EXPECT_EQ(e.strides()[0], 0);
  EXPECT_EQ(e.strides()[2], 0);
  auto v = values(e);
  EXPECT_EQ(v[5], 1);  // [0, 1, 1]
  EXPECT_THROW(expand(t, {SymInt(2), SymInt(4)}), ShapeError);
  EXPECT_EQ(expand(t, {SymInt(-1), SymInt(5)}).sizes(), (IntShape{3, 5}));
}

TEST(Views, FlattenContiguousCloneTo) {
  Tensor t = iota({2, 3, 4});
  EXPECT_EQ(flatten(t, 1).sizes(), (IntShape{2, 12}));
  Tensor tr = transpose(t, 0, 2);
  Tensor c = contiguous(tr);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(values(c), values(tr));
  Tensor h = to(tr, DType::BF16);
  EXPECT_EQ(h.dtype(), DType::BF16);
  EXPECT_EQ(values(h), values(tr));  // small integers are exact in bf16
  EXPECT_TRUE(to(t, DType::F32).is_same(t));
}

TEST(Views, CopyBroadcastsConvertsAndRejectsReadOnly) {
  Tensor dst = Tensor::empty({2, 3}, DType::I32);
  copy_(dst, testing::make_tensor({3}, DType::F64, [](int64_t i) { return i + 0.75; }));
  EXPECT_EQ(values(dst), (std::vector<double>{0, 1, 2, 0, 1, 2}));  // truncation
  EXPECT_THROW(copy_(dst, iota({4})), ShapeError);
  auto file_like = Storage::from_external(dst.raw_data(), dst.nbytes(), nullptr, false);
  Tensor ro = Tensor::from_storage(file_like, DType::I32, {2, 3}, {3, 1}, 0);
  EXPECT_THROW(copy_(ro, dst), ValueError);
}

TEST(Views, CopyIntoOverlappingSelfView) {
  Tensor t = iota({6});
  copy_(slice(t, 0, 1, std::nullopt), slice(t, 0, 0, 5));  // shift right by one
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 1, 2, 3, 4}));
}

TEST(Views, ToCoversEveryDTypePair) {
  std::mt19937 rng(1);
  for (DType from : testing::kAllDTypes) {
    Tensor src = testing::random_tensor({3, 5}, from, rng, 0, 100);
    Tensor nc = testing::noncontiguous_like(src);
    for (DType dst : testing::kAllDTypes) {
      Tensor r = to(nc, dst);
      std::vector<double> expected = values(src);
      for (double& e : expected) {
        if (dst == DType::Bool) e = e != 0;
        else if (dst == DType::BF16) e = float(BFloat16(float(e)));
        else if (dst == DType::F16) e = float(Half(float(e)));
        else if (dst == DType::F32) e = double(float(e));
        else if (is_integral(dst)) e = std::trunc(e);
      }
      testing::expect_close(r, expected, 0, 0, fmt::format("{} -> {}", from, dst));
    }
  }
}

}  // namespace
}  // namespace ingot
