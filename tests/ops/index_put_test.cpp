#include "index_test_util.h"

namespace ingot {
namespace {

using testing::ravel;
using testing::unravel;
using testing::values;
using Indices = std::vector<std::optional<Tensor>>;

// Reference `self[indices] = values` (or +=) in doubles, written from the Python
// advanced-indexing rules.
std::vector<double> ref_index_put(const Tensor& self, const Indices& indices, const Tensor& vals,
                                  bool accumulate) {
  const IntShape ss = self.sizes();
  // One entry per self dim: the index values and their shape, or none (a full slice).
  struct Entry {
    bool used = false;
    IntShape shape;
    std::vector<int64_t> v;
  };
  std::vector<Entry> per_dim(ss.size());
  size_t d = 0;
  for (const auto& idx : indices) {
    if (!idx) {
      ++d;
      continue;
    }
    if (idx->dtype() == DType::Bool) {
      const IntShape ms = idx->sizes();
      const auto mv = values(*idx);
      std::vector<std::vector<int64_t>> coords(ms.size());
      for (int64_t f = 0; f < int64_t(mv.size()); ++f) {
        if (mv[size_t(f)] == 0) continue;
        IntShape p = unravel(f, ms);
        for (size_t j = 0; j < ms.size(); ++j) coords[j].push_back(p[j]);
      }
      for (size_t j = 0; j < ms.size(); ++j) {
        per_dim[d++] = Entry{true, {int64_t(coords[j].size())}, coords[j]};
      }
      continue;
    }
    Entry e{true, idx->sizes(), {}};
    for (double x : values(*idx)) {
      int64_t i = int64_t(x);
      e.v.push_back(i < 0 ? i + ss[d] : i);
    }
    per_dim[d++] = e;
  }
  IntShape block;
  for (const Entry& e : per_dim) {
    if (!e.used) continue;
    if (e.shape.size() > block.size())
      block.insert(block.begin(), e.shape.size() - block.size(), 1);
    for (size_t i = 0; i < e.shape.size(); ++i) {
      int64_t& b = block[block.size() - e.shape.size() + i];
      if (b == 1) b = e.shape[i];
    }
  }
  // Indexed dims adjacent: the block replaces them in place; else it goes first.
  std::vector<int64_t> used_dims;
  for (size_t i = 0; i < ss.size(); ++i) {
    if (per_dim[i].used) used_dims.push_back(int64_t(i));
  }
  bool adjacent =
      used_dims.empty() || used_dims.back() - used_dims.front() + 1 == int64_t(used_dims.size());
  const int64_t first = adjacent && !used_dims.empty() ? used_dims.front() : 0;
  IntShape target;
  std::vector<int64_t> target_dim;  // self dim of each target dim, or -1 for block dims
  for (size_t i = 0; i <= ss.size(); ++i) {
    if (int64_t(i) == first) {
      for (int64_t b : block) {
        target.push_back(b);
        target_dim.push_back(-1);
      }
    }
    if (i < ss.size() && !per_dim[i].used) {
      target.push_back(ss[i]);
      target_dim.push_back(int64_t(i));
    }
  }
  std::vector<double> out = values(self);
  const auto vv = values(vals);
  const IntShape vs = vals.sizes();
  for (int64_t f = 0; f < shape_numel(target); ++f) {
    const IntShape tp = unravel(f, target);
    IntShape bp;
    IntShape sp(ss.size(), 0);
    for (size_t i = 0; i < tp.size(); ++i) {
      if (target_dim[i] < 0)
        bp.push_back(tp[i]);
      else
        sp[size_t(target_dim[i])] = tp[i];
    }
    for (size_t i = 0; i < ss.size(); ++i) {
      const Entry& e = per_dim[i];
      if (!e.used) continue;
      IntShape ep(e.shape.size());
      for (size_t j = 0; j < e.shape.size(); ++j) {
        ep[j] = e.shape[j] == 1 ? 0 : bp[bp.size() - e.shape.size() + j];
      }
      sp[i] = e.v[size_t(ravel(ep, e.shape))];
    }
    IntShape vp(vs.size());
    for (size_t j = 0; j < vs.size(); ++j) vp[j] = vs[j] == 1 ? 0 : tp[tp.size() - vs.size() + j];
    double& dst = out[size_t(ravel(sp, ss))];
    const double x = vv[size_t(ravel(vp, vs))];
    dst = accumulate ? dst + x : x;
  }
  return out;
}

struct Case {
  IntShape self_shape;
  std::function<Indices(std::mt19937&)> make_indices;
  IntShape values_shape;
  std::string name;
};

std::vector<Case> cases() {
  auto idx = [](IntShape s, int64_t lo, int64_t hi) {
    return [=](std::mt19937& rng) -> std::optional<Tensor> {
      return testing::random_index(s, lo, hi, rng);
    };
  };
  return {
      {{5, 4}, [=](auto& r) { return Indices{idx({3}, 0, 4)(r)}; }, {3, 4}, "leading dim"},
      {{5, 4},
       [=](auto& r) { return Indices{idx({3}, -5, 4)(r)}; },
       {4},
       "negative, broadcast values"},
      {{4, 5, 2},
       [=](auto& r) {
         return Indices{idx({3, 1}, 0, 3)(r), idx({1, 2}, 0, 4)(r)};
       },
       {3, 2, 2},
       "two broadcast indices"},
      {{2, 3, 8, 4},
       [=](auto& r) {
         return Indices{std::nullopt, std::nullopt, idx({2}, 0, 7)(r)};
       },
       {2, 3, 2, 4},
       "kv cache [:, :, pos]"},
      {{3, 4, 5},
       [=](auto& r) {
         return Indices{idx({2}, 0, 2)(r), std::nullopt, idx({2}, 0, 4)(r)};
       },
       {2, 4},
       "non-adjacent: block first"},
      {{3, 4, 5},
       [=](auto& r) {
         return Indices{std::nullopt, idx({2, 2}, 0, 3)(r)};
       },
       {3, 2, 2, 5},
       "2-d index in the middle"},
      {{3, 4},
       [=](auto& r) {
         return Indices{std::nullopt, idx({}, -4, 3)(r)};
       },
       {},
       "0-d index"},
      {{4, 3},
       [](std::mt19937& r) { return Indices{testing::random_tensor({4}, DType::Bool, r)}; },
       {1, 3},
       "bool mask rows"},
      {{4, 3},
       [](std::mt19937& r) {
         return Indices{testing::random_tensor({4, 3}, DType::Bool, r)};
       },
       {},
       "bool mask over all dims"},
  };
}

TEST(IndexPut, MatchesReferenceAcrossFormsAndDTypes) {
  std::mt19937 rng(21);
  for (const Case& c : cases()) {
    for (DType dtype : testing::kAllDTypes) {
      for (bool accumulate : {false, true}) {
        if (accumulate && dtype == DType::Bool) continue;
        Tensor self = testing::random_values(c.self_shape, dtype, rng);
        Indices indices = c.make_indices(rng);
        Tensor vals = testing::random_values(c.values_shape, dtype, rng);
        const std::string what = fmt::format("{} {} accumulate {}", c.name, dtype, accumulate);
        std::vector<double> expected = ref_index_put(self, indices, vals, accumulate);
        if (accumulate) {
          for (double& e : expected) e = testing::round_to(e, dtype);
        }
        const double tol = accumulate ? testing::default_atol(dtype) * 8 : 0;
        Tensor r = index_put(testing::noncontiguous_like(self), indices, vals, accumulate);
        testing::expect_close(r, expected, tol, tol, what);
        Tensor target = clone(self);
        Tensor r2 = index_put_(target, indices, testing::noncontiguous_like(vals), accumulate);
        EXPECT_TRUE(r2.is_same(target));
        testing::expect_close(target, expected, tol, tol, what + " in place");
      }
    }
  }
}

TEST(IndexPut, AccumulateAddsRepeatedIndices) {
  Tensor self = zeros({4});
  Tensor idx = Tensor::from_vector<int64_t>({1, 1, 3, 1}, {4});
  Tensor r = index_put(self, {idx}, ones({4}), true);
  EXPECT_EQ(values(r), (std::vector<double>{0, 3, 0, 1}));
  Tensor w = index_put(self, {idx}, ones({4}), false);
  EXPECT_EQ(values(w), (std::vector<double>{0, 1, 0, 1}));
}

TEST(IndexPut, KvCacheWriteInPlace) {
  // [batch, heads, max_seq, head_dim] cache; write positions 5 and 6.
  Tensor cache = zeros({1, 2, 8, 16});
  Tensor pos = Tensor::from_vector<int64_t>({5, 6}, {2});
  Tensor kv = testing::make_tensor({1, 2, 2, 16}, DType::F32, [](int64_t i) { return i + 1.0; });
  index_put_(cache, {std::nullopt, std::nullopt, pos}, kv);
  auto v = values(cache);
  EXPECT_EQ(v[5 * 16], 1);              // [0, 0, 5, 0]
  EXPECT_EQ(v[6 * 16 + 15], 32);        // [0, 0, 6, 15]
  EXPECT_EQ(v[128 + 6 * 16 + 15], 64);  // [0, 1, 6, 15]
  EXPECT_EQ(v[4 * 16], 0);
}

TEST(IndexPut, ErrorsNameTheProblemAndLeaveSelfUnchanged) {
  Tensor cache = zeros({1, 2, 8, 4});
  Tensor vals = ones({1, 2, 2, 4});
  testing::expect_throw_with<ValueError>(
      [&] {
        index_put_(cache, {std::nullopt, std::nullopt, Tensor::from_vector<int64_t>({7, 8}, {2})},
                   vals);
      },
      "[index_put_] index 8 is out of bounds for dim 2 of size 8");
  EXPECT_EQ(values(cache), std::vector<double>(64, 0));
  EXPECT_THROW(
      index_put_(cache, {std::nullopt, std::nullopt, Tensor::from_vector<int64_t>({-9}, {1})},
                 ones({1, 2, 1, 4})),
      ValueError);
  testing::expect_throw_with<ShapeError>(
      [&] {
        index_put(cache, {std::nullopt, std::nullopt, Tensor::from_vector<int64_t>({1, 2, 3}, {3})},
                  vals);
      },
      "cannot be broadcast to the indexing result of shape [1, 2, 3, 4]");
  EXPECT_THROW(index_put(cache, {Tensor::from_vector<int64_t>({0}, {1})}, ones({4}, DType::F64)),
               DTypeError);
  EXPECT_THROW(
      index_put(zeros({2}),
                {Tensor::from_vector<int64_t>({0}, {1}), Tensor::from_vector<int64_t>({0}, {1})},
                ones({1})),
      ShapeError);
  EXPECT_THROW(index_put(zeros({4, 3}), {Tensor::empty({3}, DType::Bool, true)}, ones({1})),
               ShapeError);
  // With a mask the values shape is only known from the data: checked in the kernel.
  Tensor mask = Tensor::from_vector<bool>({true, false, true, true}, {4});
  EXPECT_THROW(index_put(zeros({4, 3}), {mask}, ones({2, 3})), ShapeError);
  EXPECT_EQ(values(index_put(zeros({4}), {mask}, ones({3}))), (std::vector<double>{1, 0, 1, 1}));
}

}  // namespace
}  // namespace ingot
