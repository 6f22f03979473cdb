#include "index_test_util.h"

namespace ingot {
namespace {

using testing::ravel;
using testing::unravel;
using testing::values;

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (double v : values(t)) out.push_back(int64_t(v));
  return out;
}

// --- index_select / embedding ---------------------------------------------------------------

std::vector<double> ref_index_select(const Tensor& t, int64_t dim,
                                     const std::vector<int64_t>& idx) {
  IntShape out_sizes = t.sizes();
  out_sizes[size_t(dim)] = int64_t(idx.size());
  const std::vector<double> v = values(t);
  std::vector<double> out(size_t(shape_numel(out_sizes)));
  for (int64_t f = 0; f < int64_t(out.size()); ++f) {
    IntShape p = unravel(f, out_sizes);
    p[size_t(dim)] = idx[size_t(p[size_t(dim)])];
    out[size_t(f)] = v[size_t(ravel(p, t.sizes()))];
  }
  return out;
}

TEST(IndexSelect, MatchesReference) {
  std::mt19937 rng(11);
  for (DType dtype : testing::kAllDTypes) {
    // [.., 20] rows take the memcpy path along dim 0; the others the strided path.
    for (IntShape shape : {IntShape{5, 20}, IntShape{4, 3, 2}, IntShape{6}, IntShape{3, 1, 17}}) {
      const int64_t rank = int64_t(shape.size());
      for (int64_t dim = -rank; dim < rank; ++dim) {
        const int64_t d = dim < 0 ? dim + rank : dim;
        for (int64_t n : {0, 1, 7}) {
          DType index_dtype = n % 2 ? DType::I32 : DType::I64;
          Tensor index = testing::random_index({n}, 0, shape[size_t(d)] - 1, rng, index_dtype);
          Tensor t = testing::random_values(shape, dtype, rng);
          Tensor src = (n == 7) ? testing::noncontiguous_like(t) : t;
          Tensor idx = (n == 1) ? testing::noncontiguous_like(index) : index;
          Tensor out = index_select(src, dim, idx);
          testing::expect_close(out, ref_index_select(t, d, ints(index)), 0, 0,
                                fmt::format("{} {} dim {} n {}", dtype, shape_str(shape), dim, n));
        }
      }
    }
  }
}

TEST(IndexSelect, ScalarIndexAndErrors) {
  Tensor t = testing::make_tensor({3, 5}, DType::F32, [](int64_t i) { return double(i); });
  Tensor r = index_select(t, 1, Tensor::scalar<int64_t>(2));
  EXPECT_EQ(r.sizes(), (IntShape{3, 1}));
  EXPECT_EQ(values(r), (std::vector<double>{2, 7, 12}));
  EXPECT_EQ(values(index_select(Tensor::scalar<float>(4), 0, Tensor::scalar<int32_t>(0))),
            std::vector<double>{4});
  testing::expect_throw_with<ValueError>(
      [&] {
        index_select(t, 1, Tensor::from_vector<int64_t>({0, 7}, {2}));
      },
      "[index_select] index 7 is out of bounds for dim 1 of size 5");
  EXPECT_THROW(index_select(t, 0, Tensor::from_vector<int64_t>({-1}, {1})), ValueError);
  EXPECT_THROW(index_select(t, 0, Tensor::from_vector<float>({0}, {1})), DTypeError);
  EXPECT_THROW(index_select(t, 0, Tensor::empty({1, 1}, DType::I64, true)), ShapeError);
}

TEST(Embedding, LooksUpRows) {
  std::mt19937 rng(2);
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64}) {
    for (int64_t dim : {4, 32}) {
      Tensor w = testing::random_tensor({10, dim}, dtype, rng);
      Tensor ids =
          testing::random_index({2, 3}, 0, 9, rng, dtype == DType::F16 ? DType::I32 : DType::I64);
      for (const Tensor& weight : {w, testing::noncontiguous_like(w)}) {
        Tensor out = embedding(weight, ids);
        ASSERT_EQ(out.sizes(), (IntShape{2, 3, dim}));
        testing::expect_close(out, ref_index_select(w, 0, ints(ids)), 0, 0,
                              fmt::format("{} dim {}", dtype, dim));
      }
    }
  }
  Tensor w = Tensor::empty({4, 2}, DType::F32, true);
  testing::expect_throw_with<ValueError>(
      [&] {
        embedding(w, Tensor::from_vector<int64_t>({1, 4}, {2}));
      },
      "[embedding] index 4 is out of bounds for dim 0 of size 4");
  EXPECT_THROW(embedding(Tensor::empty({4}, DType::F32), Tensor::scalar<int64_t>(0)), ShapeError);
  EXPECT_EQ(embedding(w, Tensor::empty({0}, DType::I64)).sizes(), (IntShape{0, 2}));
}

// --- gather / scatter ----------------------------------------------------------------------

TEST(Gather, MatchesReference) {
  std::mt19937 rng(4);
  for (DType dtype : testing::kAllDTypes) {
    for (int64_t dim : {-2, 0, 1, 2}) {
      const IntShape self_shape{3, 4, 5};
      const int64_t d = dim < 0 ? dim + 3 : dim;
      IntShape index_shape{2, 4, 3};
      index_shape[size_t(d)] = 6;  // may exceed self along dim
      Tensor self = testing::random_values(self_shape, dtype, rng);
      Tensor index = testing::random_index(index_shape, 0, self_shape[size_t(d)] - 1, rng);
      Tensor out =
          gather(testing::noncontiguous_like(self), dim, testing::noncontiguous_like(index));
      ASSERT_EQ(out.sizes(), index_shape);
      const auto sv = values(self);
      const auto iv = ints(index);
      std::vector<double> expected(iv.size());
      for (int64_t f = 0; f < int64_t(iv.size()); ++f) {
        IntShape p = unravel(f, index_shape);
        p[size_t(d)] = iv[size_t(f)];
        expected[size_t(f)] = sv[size_t(ravel(p, self_shape))];
      }
      testing::expect_close(out, expected, 0, 0, fmt::format("{} dim {}", dtype, dim));
    }
  }
  Tensor s = Tensor::empty({2, 3}, DType::F32, true);
  testing::expect_throw_with<ValueError>(
      [&] {
        gather(s, 1, Tensor::from_vector<int64_t>({0, 3}, {1, 2}));
      },
      "[gather] index 3 is out of bounds for dim 1 of size 3");
  EXPECT_THROW(gather(s, 1, Tensor::empty({3, 1}, DType::I64, true)), ShapeError);
  EXPECT_THROW(gather(s, 1, Tensor::empty({2}, DType::I64, true)), ShapeError);
  EXPECT_EQ(gather(s, 0, Tensor::empty({0, 3}, DType::I64)).sizes(), (IntShape{0, 3}));
}

TEST(Scatter, SrcAndValueMatchReference) {
  std::mt19937 rng(8);
  for (DType dtype : testing::kAllDTypes) {
    for (int64_t dim : {0, 1, -1}) {
      const IntShape self_shape{4, 5};
      const int64_t d = dim < 0 ? dim + 2 : dim;
      const IntShape index_shape{3, 2};
      Tensor self = testing::random_values(self_shape, dtype, rng);
      Tensor src = testing::random_values({4, 3}, dtype, rng);
      Tensor index = testing::random_index(index_shape, 0, self_shape[size_t(d)] - 1, rng);
      // Reference: row-major order over index, the last write wins.
      std::vector<double> expected = values(self), expected_v = values(self);
      const auto iv = ints(index);
      const auto srcv = values(src);
      for (int64_t f = 0; f < int64_t(iv.size()); ++f) {
        IntShape p = unravel(f, index_shape);
        const double sv = srcv[size_t(ravel(p, {4, 3}))];
        p[size_t(d)] = iv[size_t(f)];
        expected[size_t(ravel(p, self_shape))] = sv;
        expected_v[size_t(ravel(p, self_shape))] = testing::round_to(3, dtype);
      }
      const std::string what = fmt::format("{} dim {}", dtype, dim);
      testing::expect_close(
          scatter(testing::noncontiguous_like(self), dim, index, testing::noncontiguous_like(src)),
          expected, 0, 0, what);
      testing::expect_close(scatter(self, dim, index, Scalar(3)), expected_v, 0, 0, what);
    }
  }
  Tensor s = Tensor::empty({2, 3}, DType::F32, true);
  Tensor idx = Tensor::from_vector<int64_t>({5}, {1, 1});
  testing::expect_throw_with<ValueError>(
      [&] { scatter(s, 0, idx, s); }, "[scatter.src] index 5 is out of bounds for dim 0 of size 2");
  EXPECT_THROW(
      scatter(s, 0, Tensor::empty({1, 1}, DType::I64, true), Tensor::empty({2, 3}, DType::F64)),
      DTypeError);
}

// --- index_copy --------------------------------------------------------------------------------

TEST(IndexCopy, FunctionalAndInPlace) {
  std::mt19937 rng(6);
  for (DType dtype : {DType::F32, DType::BF16, DType::I32, DType::Bool}) {
    for (int64_t dim : {0, 1, -1}) {
      const IntShape shape{4, 6, 3};
      const int64_t d = dim < 0 ? dim + 3 : dim;
      Tensor self = testing::random_values(shape, dtype, rng);
      // Distinct indices: a random permutation prefix.
      std::vector<int64_t> perm(size_t(shape[size_t(d)]));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      perm.resize(2);
      Tensor index = Tensor::from_vector<int64_t>(perm, {2});
      IntShape src_shape = shape;
      src_shape[size_t(d)] = 2;
      Tensor source = testing::random_values(src_shape, dtype, rng);
      std::vector<double> expected = values(self);
      const auto srcv = values(source);
      for (int64_t f = 0; f < int64_t(srcv.size()); ++f) {
        IntShape p = unravel(f, src_shape);
        p[size_t(d)] = perm[size_t(p[size_t(d)])];
        expected[size_t(ravel(p, shape))] = srcv[size_t(f)];
      }
      const std::string what = fmt::format("{} dim {}", dtype, dim);
      const std::vector<double> before = values(self);
      testing::expect_close(index_copy(self, dim, index, testing::noncontiguous_like(source)),
                            expected, 0, 0, what);
      EXPECT_EQ(values(self), before) << what;
      Tensor target = testing::noncontiguous_like(self);
      Tensor r = index_copy_(target, dim, index, source);
      EXPECT_TRUE(r.is_same(target));
      testing::expect_close(target, expected, 0, 0, what + " in place");
    }
  }
}

TEST(IndexCopy, KvCacheWriteAndErrorsLeaveSelfUnchanged) {
  // cache [batch, heads, seq, head_dim]; write 2 new positions along seq.
  Tensor cache = zeros({1, 2, 5, 3});
  Tensor k = ones({1, 2, 2, 3});
  index_copy_(cache, 2, Tensor::from_vector<int64_t>({3, 1}, {2}), k);
  auto v = values(cache);
  EXPECT_EQ(v[1 * 3], 1);  // [0, 0, 1, 0]
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[15 + 3 * 3 + 2], 1);  // [0, 1, 3, 2]
  Tensor before = clone(cache);
  testing::expect_throw_with<ValueError>(
      [&] {
        index_copy_(cache, 2, Tensor::from_vector<int64_t>({0, 5}, {2}), k);
      },
      "[index_copy_] index 5 is out of bounds for dim 2 of size 5");
  EXPECT_EQ(values(cache), values(before));
  EXPECT_THROW(index_copy_(cache, 2, Tensor::from_vector<int64_t>({0}, {1}), k), ShapeError);
  EXPECT_THROW(index_copy(cache, 2, Tensor::from_vector<int64_t>({0, 1}, {2}), to(k, DType::F64)),
               DTypeError);
}

// --- shape functions never read data ------------------------------------------------------------

TEST(Indexing, ShapeFunctionsWorkOnMetaTensors) {
  auto meta = [](DType t, IntShape s) { return Tensor::meta(t, to_sym_shape(s)); };
  auto shape_of = [](const char* name, std::vector<Value> args) {
    const OpDef& op = OpRegistry::instance().get(name);
    return to_int_shape(op.shape_fn(normalize_args(op, std::move(args)))[0].sizes);
  };
  EXPECT_EQ(shape_of("index_select", {meta(DType::F32, {4, 6}), int64_t(1), meta(DType::I64, {3})}),
            (IntShape{4, 3}));
  EXPECT_EQ(shape_of("gather", {meta(DType::F32, {4, 6}), int64_t(0), meta(DType::I32, {9, 2})}),
            (IntShape{9, 2}));
  EXPECT_EQ(shape_of("embedding", {meta(DType::BF16, {100, 8}), meta(DType::I64, {2, 5})}),
            (IntShape{2, 5, 8}));
  EXPECT_EQ(shape_of("index_put", {meta(DType::F32, {1, 2, 8, 4}),
                                   TensorList{Tensor(), Tensor(), meta(DType::I64, {3})},
                                   meta(DType::F32, {1, 2, 3, 4})}),
            (IntShape{1, 2, 8, 4}));
  EXPECT_EQ(shape_of("index_copy", {meta(DType::F32, {4, 6}), int64_t(0), meta(DType::I64, {2}),
                                    meta(DType::F32, {2, 6})}),
            (IntShape{4, 6}));
}

}  // namespace
}  // namespace ingot
