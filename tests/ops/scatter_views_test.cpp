#include "index_test_util.h"

namespace ingot {
namespace {

using testing::values;

TEST(SliceScatter, MatchesCopyIntoSlice) {
  std::mt19937 rng(13);
  struct Args {
    int64_t dim;
    std::optional<SymInt> start, end;
    int64_t step;
  };
  const std::vector<Args> args{{0, std::nullopt, std::nullopt, 1},
                               {1, 1, 5, 2},
                               {-1, -3, std::nullopt, 1},
                               {0, 2, 2, 1},
                               {1, 0, 100, 3},
                               {-2, 1, -1, 1}};
  for (DType dtype : testing::kAllDTypes) {
    for (const Args& a : args) {
      Tensor self = testing::random_values({4, 6}, dtype, rng);
      // The expected result: write src through the slice view of a clone.
      Tensor expected = clone(self);
      Tensor view = slice(expected, a.dim, a.start, a.end, a.step);
      Tensor src = testing::random_values(view.sizes(), dtype, rng);
      copy_(view, src);
      Tensor out = slice_scatter(testing::noncontiguous_like(self),
                                 testing::noncontiguous_like(src), a.dim, a.start, a.end, a.step);
      const std::string what = fmt::format("{} dim {} step {}", dtype, a.dim, a.step);
      EXPECT_EQ(out.sizes(), self.sizes()) << what;
      testing::expect_close(out, values(expected), 0, 0, what);
    }
  }
  Tensor self = zeros({4, 6});
  testing::expect_throw_with<ShapeError>(
      [&] {
        slice_scatter(self, ones({4, 2}), 1, 0, 3);
      },
      "must have the shape of the slice");
  EXPECT_THROW(slice_scatter(self, ones({4, 3}), 1, 0, 3, 0), ValueError);
  // src converts to self's dtype, as copy_ does.
  Tensor r = slice_scatter(self, ones({1, 6}, DType::I64), 0, 3);
  EXPECT_EQ(r.dtype(), DType::F32);
  EXPECT_EQ(values(r)[18], 1);
}

TEST(SelectScatter, MatchesCopyIntoSelect) {
  std::mt19937 rng(17);
  for (DType dtype : {DType::F32, DType::F16, DType::I64, DType::Bool}) {
    for (int64_t dim : {-3, 0, 1, 2}) {
      for (int64_t index : {0, -1, 1}) {
        Tensor self = testing::random_values({2, 3, 4}, dtype, rng);
        Tensor expected = clone(self);
        Tensor view = select(expected, dim, index);
        Tensor src = testing::random_values(view.sizes(), dtype, rng);
        copy_(view, src);
        Tensor out = select_scatter(testing::noncontiguous_like(self), src, dim, index);
        testing::expect_close(out, values(expected), 0, 0,
                              fmt::format("{} dim {} index {}", dtype, dim, index));
      }
    }
  }
  Tensor self = zeros({2, 3});
  EXPECT_THROW(select_scatter(self, ones({3}), 0, 2), ValueError);
  EXPECT_THROW(select_scatter(self, ones({2}), 0, 1), ShapeError);
  Tensor one = select_scatter(zeros({3}), Tensor::scalar<float>(5), 0, -1);
  EXPECT_EQ(values(one), (std::vector<double>{0, 0, 5}));
}

}  // namespace
}  // namespace ingot
