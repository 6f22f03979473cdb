#include "index_test_util.h"

namespace ingot {
namespace {

using testing::ravel;
using testing::unravel;
using testing::values;

// Reference cat in doubles: out position -> (input, position inside it).
std::vector<double> ref_cat(const std::vector<Tensor>& ts, int64_t dim, const IntShape& out_sizes) {
  std::vector<double> out(size_t(shape_numel(out_sizes)));
  for (int64_t f = 0; f < int64_t(out.size()); ++f) {
    IntShape idx = unravel(f, out_sizes);
    int64_t k = idx[size_t(dim)];
    for (const Tensor& t : ts) {
      if (t.dim() == 1 && t.size(0) == 0) continue;
      if (k < t.size(dim)) {
        idx[size_t(dim)] = k;
        out[size_t(f)] = values(t)[size_t(ravel(idx, t.sizes()))];
        break;
      }
      k -= t.size(dim);
    }
  }
  return out;
}

TEST(Cat, MatchesReferenceOverShapesDimsAndDTypes) {
  std::mt19937 rng(7);
  for (DType dtype : testing::kAllDTypes) {
    for (int64_t rank = 1; rank <= 3; ++rank) {
      for (int64_t dim = -rank; dim < rank; ++dim) {
        const int64_t d = dim < 0 ? dim + rank : dim;
        IntShape base(static_cast<size_t>(rank), 1);
        for (auto& s : base) s = std::uniform_int_distribution<int64_t>(1, 3)(rng);
        std::vector<Tensor> ts;
        for (int64_t along : {2, 0, 1, 3}) {
          IntShape s = base;
          s[size_t(d)] = along;
          Tensor t = testing::random_values(s, dtype, rng);
          ts.push_back(ts.size() % 2 ? testing::noncontiguous_like(t) : t);
        }
        Tensor out = cat(ts, dim);
        IntShape expected_sizes = base;
        expected_sizes[size_t(d)] = 6;
        ASSERT_EQ(out.sizes(), expected_sizes);
        EXPECT_EQ(out.dtype(), dtype);
        testing::expect_close(out, ref_cat(ts, d, expected_sizes), 0, 0,
                              fmt::format("{} rank {} dim {}", dtype, rank, dim));
      }
    }
  }
}

TEST(Cat, PromotesDTypesAndSkipsLegacyEmpty) {
  Tensor a = testing::make_tensor({2, 2}, DType::I32, [](int64_t i) { return double(i); });
  Tensor b = testing::make_tensor({1, 2}, DType::F16, [](int64_t i) { return i + 0.5; });
  Tensor r = cat({a, b});
  EXPECT_EQ(r.dtype(), DType::F16);
  EXPECT_EQ(values(r), (std::vector<double>{0, 1, 2, 3, 0.5, 1.5}));
  // A [0] tensor joins tensors of any rank (and still takes part in promotion).
  Tensor legacy = Tensor::empty({0}, DType::F64);
  Tensor s = cat({legacy, a, legacy}, 1);
  EXPECT_EQ(s.sizes(), (IntShape{2, 2}));
  EXPECT_EQ(s.dtype(), DType::F64);
  EXPECT_EQ(values(s), values(a));
  EXPECT_EQ(cat({legacy, legacy}).sizes(), (IntShape{0}));
}

TEST(Cat, RejectsBadInputs) {
  Tensor a = Tensor::empty({2, 3}, DType::F32, true);
  testing::expect_throw_with<ShapeError>(
      [&] {
        cat({a, Tensor::empty({2, 4}, DType::F32)}, 0);
      },
      "dim 1 differs");
  EXPECT_THROW(cat({a, Tensor::empty({2, 3, 1}, DType::F32)}), ShapeError);
  EXPECT_THROW(cat({a, Tensor::scalar<float>(1)}), ShapeError);
  EXPECT_THROW(cat({}), ValueError);
  EXPECT_THROW(cat({a}, 2), ValueError);
}

TEST(Stack, MatchesReference) {
  std::mt19937 rng(3);
  for (DType dtype : {DType::F32, DType::BF16, DType::I64, DType::Bool}) {
    for (int64_t dim = -3; dim <= 2; ++dim) {
      std::vector<Tensor> ts;
      for (int i = 0; i < 3; ++i) {
        Tensor t = testing::random_values({2, 4}, dtype, rng);
        ts.push_back(i == 1 ? testing::noncontiguous_like(t) : t);
      }
      Tensor out = stack(ts, dim);
      const int64_t d = dim < 0 ? dim + 3 : dim;
      IntShape sizes{2, 4};
      sizes.insert(sizes.begin() + d, 3);
      ASSERT_EQ(out.sizes(), sizes);
      std::vector<double> expected(size_t(shape_numel(sizes)));
      for (int64_t f = 0; f < int64_t(expected.size()); ++f) {
        IntShape idx = unravel(f, sizes);
        const int64_t which = idx[size_t(d)];
        idx.erase(idx.begin() + d);
        expected[size_t(f)] = values(ts[size_t(which)])[size_t(ravel(idx, {2, 4}))];
      }
      testing::expect_close(out, expected, 0, 0, fmt::format("{} dim {}", dtype, dim));
    }
  }
  Tensor mixed = stack({Tensor::scalar<int32_t>(2), Tensor::scalar<double>(0.5)});
  EXPECT_EQ(mixed.dtype(), DType::F64);
  EXPECT_EQ(values(mixed), (std::vector<double>{2, 0.5}));
  EXPECT_THROW(stack({Tensor::empty({2}, DType::F32), Tensor::empty({3}, DType::F32)}), ShapeError);
  EXPECT_THROW(stack({Tensor::empty({2}, DType::F32)}, 2), ValueError);
}

TEST(Split, PiecesAreViewsOfTheRightSizes) {
  Tensor t = testing::make_tensor({3, 7}, DType::F32, [](int64_t i) { return double(i); });
  auto pieces = split(t, 3, -1);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].sizes(), (IntShape{3, 3}));
  EXPECT_EQ(pieces[2].sizes(), (IntShape{3, 1}));
  for (const Tensor& p : pieces) EXPECT_TRUE(p.shares_storage_with(t));
  EXPECT_EQ(values(pieces[1]), values(slice(t, 1, 3, 6)));
  EXPECT_EQ(values(pieces[2]), (std::vector<double>{6, 13, 20}));
  // Larger than the dim: one piece; exact multiple: no empty tail.
  EXPECT_EQ(split(t, 10, 1).size(), 1u);
  EXPECT_EQ(split(t, 1, 0).size(), 3u);
  // Split of a non-contiguous tensor keeps its strides.
  Tensor tr = transpose(t, 0, 1);  // [7, 3]
  auto tp = split(tr, 4);
  ASSERT_EQ(tp.size(), 2u);
  EXPECT_EQ(values(tp[1]), values(slice(tr, 0, 4, std::nullopt)));
  // split_size 0 only for an empty dim.
  Tensor e = Tensor::empty({0, 2}, DType::F32);
  EXPECT_EQ(split(e, 0).size(), 1u);
  EXPECT_EQ(split(e, 2).size(), 1u);
  EXPECT_THROW(split(t, 0), ValueError);
  EXPECT_THROW(split(Tensor::scalar<float>(1), 1), ShapeError);
}

TEST(Split, WithSizes) {
  Tensor t = testing::make_tensor({2, 6}, DType::I64, [](int64_t i) { return double(i); });
  auto pieces = split(t, SymIntList{SymInt(1), SymInt(0), SymInt(5)}, 1);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].sizes(), (IntShape{2, 1}));
  EXPECT_EQ(pieces[1].sizes(), (IntShape{2, 0}));
  EXPECT_EQ(values(pieces[2]), (std::vector<double>{1, 2, 3, 4, 5, 7, 8, 9, 10, 11}));
  testing::expect_throw_with<ShapeError>(
      [&] {
        split_with_sizes(t, {SymInt(2), SymInt(3)}, 1);
      },
      "sum to 5");
  EXPECT_THROW(split_with_sizes(t, {SymInt(-1), SymInt(7)}, 1), ValueError);
}

TEST(Chunk, FollowsTorchChunkSizes) {
  auto sizes_of = [](const std::vector<Tensor>& ps, int64_t dim) {
    IntShape s;
    for (const Tensor& p : ps) s.push_back(p.size(dim));
    return s;
  };
  Tensor t5 = Tensor::empty({5, 2}, DType::F32, true);
  EXPECT_EQ(sizes_of(chunk(t5, 4), 0), (IntShape{2, 2, 1}));
  EXPECT_EQ(sizes_of(chunk(t5, 2), 0), (IntShape{3, 2}));
  EXPECT_EQ(sizes_of(chunk(t5, 9), 0), (IntShape{1, 1, 1, 1, 1}));
  EXPECT_EQ(sizes_of(chunk(t5, 2, -1), 1), (IntShape{1, 1}));
  Tensor t6 = testing::make_tensor({6}, DType::F32, [](int64_t i) { return double(i); });
  auto c = chunk(t6, 3);
  EXPECT_EQ(sizes_of(c, 0), (IntShape{2, 2, 2}));
  EXPECT_EQ(values(c[2]), (std::vector<double>{4, 5}));
  EXPECT_TRUE(c[1].shares_storage_with(t6));
  EXPECT_EQ(sizes_of(chunk(Tensor::empty({0}, DType::F32), 3), 0), (IntShape{0, 0, 0}));
  EXPECT_THROW(chunk(t6, 0), ValueError);
}

TEST(Split, ShapeFunctionReportsEveryPiece) {
  const OpDef& op = OpRegistry::instance().get("split.Tensor");
  Tensor meta = Tensor::meta(DType::F16, {SymInt(4), SymInt(10)});
  auto metas = op.shape_fn(normalize_args(op, {meta, SymInt(4), int64_t(1)}));
  ASSERT_EQ(metas.size(), 3u);
  EXPECT_EQ(to_int_shape(metas[2].sizes), (IntShape{4, 2}));
  EXPECT_EQ(metas[0].dtype, DType::F16);
}

}  // namespace
}  // namespace ingot
