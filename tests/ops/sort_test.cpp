
#include "index_test_util.h"

namespace ingot {
namespace {

using testing::ravel;
using testing::unravel;
using testing::values;

// Reference: for every row along dim, a stable sort of (value, position), NaN largest;
// returns the first k of each row as (values, indices) in output order.
std::pair<std::vector<double>, std::vector<double>> ref_rows(const Tensor& t, int64_t dim,
                                                             int64_t k, bool largest_first) {
  const IntShape s = t.dim() == 0 ? IntShape{1} : t.sizes();
  const auto v = values(t);
  IntShape out_s = s;
  out_s[size_t(dim)] = k;
  std::vector<double> ov(size_t(shape_numel(out_s))), oi(ov.size());
  for (int64_t f = 0; f < int64_t(ov.size()); ++f) {
    IntShape p = unravel(f, out_s);
    if (p[size_t(dim)] != 0) continue;  // handle each row once
    std::vector<std::pair<double, int64_t>> row;
    for (int64_t j = 0; j < s[size_t(dim)]; ++j) {
      p[size_t(dim)] = j;
      row.emplace_back(v[size_t(ravel(p, s))], j);
    }
    std::stable_sort(row.begin(), row.end(), [&](const auto& a, const auto& b) {
      const bool na = std::isnan(a.first), nb = std::isnan(b.first);
      if (na || nb) return largest_first ? (na && !nb) : (!na && nb);
      return largest_first ? a.first > b.first : a.first < b.first;
    });
    for (int64_t j = 0; j < k; ++j) {
      p[size_t(dim)] = j;
      ov[size_t(ravel(p, out_s))] = row[size_t(j)].first;
      oi[size_t(ravel(p, out_s))] = double(row[size_t(j)].second);
    }
  }
  return {ov, oi};
}

// Small integer-valued data so that ties are frequent (checks stability).
Tensor tie_heavy(const IntShape& s, DType dtype, std::mt19937& rng) {
  if (dtype == DType::Bool) return testing::random_tensor(s, dtype, rng);
  return to(testing::random_tensor(s, DType::I64, rng, dtype == DType::U8 ? 0 : -3, 3), dtype);
}

TEST(Sort, StableAndMatchesReference) {
  std::mt19937 rng(31);
  for (DType dtype : testing::kAllDTypes) {
    for (IntShape shape :
         {IntShape{3, 9}, IntShape{2, 5, 4}, IntShape{7}, IntShape{0, 3}, IntShape{}}) {
      const int64_t rank = int64_t(shape.size());
      for (int64_t dim = -std::max<int64_t>(rank, 1); dim < std::max<int64_t>(rank, 1); ++dim) {
        const int64_t d = dim < 0 ? dim + std::max<int64_t>(rank, 1) : dim;
        Tensor t = tie_heavy(shape, dtype, rng);
        const int64_t n = rank == 0 ? 1 : shape[size_t(d)];
        for (bool descending : {false, true}) {
          auto [v, i] = sort(testing::noncontiguous_like(t), dim, descending);
          auto [ev, ei] = ref_rows(t, d, n, descending);
          const std::string what =
              fmt::format("{} {} dim {} desc {}", dtype, shape_str(shape), dim, descending);
          EXPECT_EQ(v.sizes(), shape) << what;
          EXPECT_EQ(i.dtype(), DType::I64);
          testing::expect_close(v, ev, 0, 0, what);
          testing::expect_close(i, ei, 0, 0, what + " indices");
        }
      }
    }
  }
}

TEST(Sort, NaNSortsAsLargest) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : testing::kFloatDTypes) {
    Tensor t = to(Tensor::from_vector<double>({2, nan, -1, nan, 0}, {5}), dtype);
    auto [v, i] = sort(t);
    auto vv = values(v);
    EXPECT_EQ(vv[0], -1);
    EXPECT_TRUE(std::isnan(vv[3]) && std::isnan(vv[4]));
    EXPECT_EQ(values(i), (std::vector<double>{2, 4, 0, 1, 3}));
    auto [dv, di] = sort(t, 0, true);
    EXPECT_EQ(values(di), (std::vector<double>{1, 3, 0, 4, 2}));
    auto [tv, ti] = topk(t, 2);
    EXPECT_EQ(values(ti), (std::vector<double>{1, 3}));
    auto [sv, si] = topk(t, 2, -1, false);
    EXPECT_EQ(values(si), (std::vector<double>{2, 4}));
  }
  auto [sv, si] = sort(Tensor::from_vector<double>({1, 2}, {2}), 0, false);
  EXPECT_THROW(sort(sv, 1), ValueError);
}

TEST(Topk, MatchesReferenceBothPaths) {
  std::mt19937 rng(41);
  for (DType dtype :
       {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64, DType::U8}) {
    for (IntShape shape : {IntShape{4, 40}, IntShape{40, 3}, IntShape{2, 3, 100}}) {
      for (int64_t dim : {-1, 0}) {
        const int64_t d = dim < 0 ? dim + int64_t(shape.size()) : dim;
        const int64_t n = shape[size_t(d)];
        // Wide-range floats (few ties) and small integers (many ties).
        Tensor t = is_floating(dtype) && n > 50
                       ? testing::random_tensor(shape, dtype, rng, -100, 100)
                       : tie_heavy(shape, dtype, rng);
        for (int64_t k : {int64_t(0), int64_t(1), int64_t(2), n / 2, n}) {
          for (bool largest : {true, false}) {
            auto [v, i] = topk(testing::noncontiguous_like(t), k, dim, largest);
            auto [ev, ei] = ref_rows(t, d, k, largest);
            const std::string what = fmt::format("{} {} dim {} k {} largest {}", dtype,
                                                 shape_str(shape), dim, k, largest);
            IntShape es = shape;
            es[size_t(d)] = k;
            EXPECT_EQ(v.sizes(), es) << what;
            testing::expect_close(v, ev, 0, 0, what);
            testing::expect_close(i, ei, 0, 0, what + " indices");
          }
        }
      }
    }
  }
  Tensor t = zeros({3, 4});
  testing::expect_throw_with<ValueError>([&] { topk(t, 5); }, "k (5) is out of range");
  EXPECT_THROW(topk(t, -1), ValueError);
  auto [sv, si] = topk(Tensor::scalar<float>(3), 1);
  EXPECT_EQ(sv.dim(), 0);
  EXPECT_EQ(values(si), std::vector<double>{0});
}

TEST(Topk, VocabularyRowMatchesReference) {
  // A logits row the size of a large vocabulary (the heap path); speed is measured in
  // bench/, not here.
  std::mt19937 rng(5);
  const int64_t vocab = 151936;
  Tensor logits = testing::random_tensor({1, vocab}, DType::F32, rng, -10, 10);
  auto [v, i] = topk(logits, 50);
  auto [ev, ei] = ref_rows(logits, 1, 50, true);
  testing::expect_close(v, ev, 0, 0);
  testing::expect_close(i, ei, 0, 0);
}

}  // namespace
}  // namespace ingot
