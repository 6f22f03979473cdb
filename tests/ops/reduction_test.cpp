#include <cmath>
#include <numeric>

#include "dtype_safe_random.h"
#include "op_test_util.h"
#include "reduce_reference.h"

namespace ingot {
namespace {

using testing::values;

double ref_sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double ref_max(const std::vector<double>& v) {
  double m = -INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
double ref_min(const std::vector<double>& v) {
  double m = INFINITY;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}
double ref_argmax(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return double(i);
    if (v[i] > v[best]) best = i;
  }
  return double(best);
}
double ref_argmin(const std::vector<double>& v) {
  size_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return double(i);
    if (v[i] < v[best]) best = i;
  }
  return double(best);
}

IntShape kept_shape(const IntShape& sizes, const std::vector<bool>& mask, bool keepdim) {
  IntShape out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

struct DimCase {
  IntShape sizes;
  IntShape dims;
};
const DimCase kDimCases[] = {
    {{2, 3, 4}, {}},      {{2, 3, 4}, {0}},       {{2, 3, 4}, {1}},     {{2, 3, 4}, {-1}},
    {{2, 3, 4}, {0, 2}},  {{2, 3, 4}, {2, 0}},    {{2, 3, 4}, {0, 1, 2}}, {{2, 3, 4}, {-2, -1}},
    {{5, 1, 7}, {1}},     {{5, 1, 7}, {0, 1}},    {{0, 3}, {1}},        {{0, 3}, {0}},
    {{}, {}},             {{}, {0}},              {{7}, {0}},           {{3, 40000}, {-1}},
    {{40000, 3}, {0}},    {{200, 300}, {0, 1}},   {{4, 35, 33}, {1}},
};

bool has_empty_reduction(const IntShape& sizes, const std::vector<bool>& mask) {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d) n *= mask[d] ? sizes[d] : 1;
  return n == 0;
}

TEST(Reduction, SumMeanAmaxAminMatchReference) {
  std::mt19937 rng(53);
  for (const DimCase& c : kDimCases) {
    const auto mask = testing::reduce_mask(int64_t(c.sizes.size()), c.dims);
    for (DType t : testing::kAllDTypes) {
      const Tensor a = testing::random_for_dtype(c.sizes, t, rng, -3, 3);
      const auto va = values(a);
      for (bool nc : {false, true}) {
        const Tensor x = nc ? testing::noncontiguous_like(a) : a;
        for (bool keepdim : {false, true}) {
          const IntShape out_shape = kept_shape(c.sizes, mask, keepdim);
          const std::string what = fmt::format("{} {} dims [{}]{}{}", t, shape_str(c.sizes),
                                               fmt::join(c.dims, ","), nc ? " strided" : "",
                                               keepdim ? " keepdim" : "");
          const int64_t n = std::max<int64_t>(1, shape_numel(c.sizes) / std::max<int64_t>(1, shape_numel(out_shape)));
          // sum: integers and bool accumulate exactly in int64.
          const Tensor s = ingot::sum(x, c.dims, keepdim);
          EXPECT_EQ(s.sizes(), out_shape) << what;
          const auto rs = testing::reference_reduce(c.sizes, va, mask, ref_sum);
          if (is_floating(t)) {
            EXPECT_EQ(s.dtype(), t) << what;
            const double tol = testing::default_atol(t) * std::sqrt(double(n)) * 4;
            testing::expect_close(s, rs, tol, testing::default_rtol(t) * 2, "sum " + what);
            std::vector<double> rm;
            for (double v : rs) rm.push_back(v / double(n));
            const Tensor m = ingot::mean(x, c.dims, keepdim);
            if (has_empty_reduction(c.sizes, mask)) {
              for (double v : values(m)) EXPECT_TRUE(std::isnan(v)) << "mean of nothing " << what;
            } else {
              testing::expect_close(m, rm, tol, testing::default_rtol(t) * 2, "mean " + what);
            }
          } else {
            EXPECT_EQ(s.dtype(), DType::I64) << what;
            EXPECT_EQ(values(s), rs) << "sum " << what;
          }
          if (!has_empty_reduction(c.sizes, mask)) {
            const Tensor mx = ingot::amax(x, c.dims, keepdim), mn = ingot::amin(x, c.dims, keepdim);
            EXPECT_EQ(mx.dtype(), t);
            EXPECT_EQ(mx.sizes(), out_shape) << what;
            EXPECT_EQ(values(mx), testing::reference_reduce(c.sizes, va, mask, ref_max)) << "amax " << what;
            EXPECT_EQ(values(mn), testing::reference_reduce(c.sizes, va, mask, ref_min)) << "amin " << what;
          }
        }
      }
    }
  }
}

TEST(Reduction, FullSumAndMeanOverloads) {
  const Tensor x = testing::make_tensor({3, 4}, DType::F32, [](int64_t i) { return double(i); });
  EXPECT_EQ(ingot::sum(x).dim(), 0);
  EXPECT_EQ(values(ingot::sum(x)), (std::vector<double>{66}));
  EXPECT_EQ(values(ingot::mean(x)), (std::vector<double>{5.5}));
  EXPECT_EQ(values(ingot::sum(x, {}, true)), (std::vector<double>{66}));
  EXPECT_EQ(ingot::sum(x, {}, true).sizes(), (IntShape{1, 1}));
  // dtype converts the input first.
  const Tensor i = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ(ingot::sum(i, DType::F64).dtype(), DType::F64);
  EXPECT_EQ(values(ingot::mean(i, DType::F32)), (std::vector<double>{2}));
  EXPECT_EQ(ingot::sum(i, {0}, false, DType::I32).dtype(), DType::I32);
  const Tensor b = Tensor::from_vector<bool>({true, true, false}, {3});
  EXPECT_EQ(values(ingot::sum(b)), (std::vector<double>{2}));
  EXPECT_EQ(ingot::sum(b).dtype(), DType::I64);
  // f16 sums accumulate in float: 4096 ones are exact though f16 cannot count past 2048 by ones.
  const Tensor h = testing::make_tensor({4096}, DType::F16, [](int64_t) { return 1.0; });
  EXPECT_EQ(values(ingot::sum(h)), (std::vector<double>{4096}));
}

TEST(Reduction, AmaxPropagatesNaN) {
  const Tensor x = Tensor::from_vector<float>({1, NAN, 3, 0, -1, 2}, {2, 3});
  testing::expect_close(ingot::amax(x, {1}), {NAN, 2}, 0, 0);
  testing::expect_close(ingot::amin(x, {0}), {0, NAN, 2}, 0, 0);
  testing::expect_close(ingot::amax(x), {NAN}, 0, 0);
}

TEST(Reduction, ArgmaxArgminMatchReferenceWithTies) {
  std::mt19937 rng(59);
  const DimCase cases[] = {{{2, 3, 4}, {0}}, {{2, 3, 4}, {1}}, {{2, 3, 4}, {-1}}, {{5, 1, 7}, {1}},
                           {{7}, {0}},       {{}, {0}},        {{6, 50}, {0}},    {{50, 6}, {1}}};
  for (DType t : {DType::U8, DType::I8, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64}) {
    for (const DimCase& c : cases) {
      // Integer-valued data in a small range: many ties.
      const Tensor a = testing::make_tensor(c.sizes, t, [&](int64_t) { return double(rng() % 5); });
      const auto va = values(a);
      const auto mask = testing::reduce_mask(int64_t(c.sizes.size()), c.dims);
      for (bool nc : {false, true}) {
        const Tensor x = nc ? testing::noncontiguous_like(a) : a;
        for (bool keepdim : {false, true}) {
          const std::string what = fmt::format("{} {} dim {}{}", t, shape_str(c.sizes), c.dims[0], nc ? " strided" : "");
          const Tensor am = ingot::argmax(x, c.dims[0], keepdim);
          EXPECT_EQ(am.dtype(), DType::I64);
          EXPECT_EQ(am.sizes(), kept_shape(c.sizes, mask, keepdim)) << what;
          EXPECT_EQ(values(am), testing::reference_reduce(c.sizes, va, mask, ref_argmax)) << "argmax " << what;
          EXPECT_EQ(values(ingot::argmin(x, c.dims[0], keepdim)),
                    testing::reference_reduce(c.sizes, va, mask, ref_argmin))
              << "argmin " << what;
        }
        // No dim: index into the flattened tensor.
        EXPECT_EQ(values(ingot::argmax(x)), (std::vector<double>{ref_argmax(va)}));
        EXPECT_EQ(ingot::argmax(x).dim(), 0);
        EXPECT_EQ(ingot::argmax(x, std::nullopt, true).sizes(), IntShape(c.sizes.size(), 1));
      }
    }
  }
}

TEST(Reduction, ArgmaxNaNAndLongRows) {
  const Tensor x = Tensor::from_vector<float>({1, NAN, 3, NAN}, {4});
  EXPECT_EQ(values(ingot::argmax(x)), (std::vector<double>{1}));
  EXPECT_EQ(values(ingot::argmin(x)), (std::vector<double>{1}));
  const Tensor inf = Tensor::from_vector<float>({-INFINITY, -INFINITY}, {2});
  EXPECT_EQ(values(ingot::argmax(inf)), (std::vector<double>{0}));
  // A vocabulary-sized row is split over threads; the first of two equal maxima wins,
  // and a NaN anywhere wins over both.
  const int64_t n = 200000;
  Tensor logits = testing::make_tensor({1, n}, DType::F32, [](int64_t i) { return std::sin(double(i)); });
  logits.data<float>()[150001] = 5;
  logits.data<float>()[170001] = 5;
  EXPECT_EQ(values(ingot::argmax(logits, -1)), (std::vector<double>{150001}));
  EXPECT_EQ(values(ingot::argmax(logits)), (std::vector<double>{150001}));
  logits.data<float>()[199999] = NAN;
  EXPECT_EQ(values(ingot::argmax(logits, -1)), (std::vector<double>{199999}));
  const Tensor big = testing::make_tensor({n}, DType::I32, [](int64_t i) { return double(i % 1000); });
  EXPECT_EQ(values(ingot::argmax(big)), (std::vector<double>{999}));
  EXPECT_EQ(values(ingot::argmin(big)), (std::vector<double>{0}));
  EXPECT_EQ(values(ingot::amax(big)), (std::vector<double>{999}));
}

TEST(Reduction, Errors) {
  const Tensor x = Tensor::empty({2, 0}, DType::F32);
  EXPECT_THROW(ingot::amax(x, {1}), ValueError);
  EXPECT_NO_THROW(ingot::amax(x, {0}));  // reduces size 2, leaves an empty result
  EXPECT_THROW(ingot::argmax(x), ValueError);
  EXPECT_THROW(ingot::argmax(x, 1), ValueError);
  EXPECT_THROW(ingot::mean(Tensor::from_vector<int64_t>({1, 2}, {2})), DTypeError);
  EXPECT_THROW(ingot::mean(Tensor::from_vector<float>({1, 2}, {2}), DType::I32), DTypeError);
  EXPECT_THROW(ingot::sum(Tensor::empty({2, 3}, DType::F32), {1, -1}), ValueError);  // repeated
  EXPECT_THROW(ingot::sum(Tensor::empty({2, 3}, DType::F32), {2}), ValueError);
  EXPECT_THROW(ingot::argmax(Tensor::from_vector<bool>({true}, {1})), DTypeError);
  try {
    ingot::amax(x, {1});
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[amax]"), std::string::npos) << e.what();
  }
}

TEST(Cumsum, MatchesReference) {
  std::mt19937 rng(61);
  const DimCase cases[] = {{{2, 3, 4}, {0}}, {{2, 3, 4}, {1}}, {{2, 3, 4}, {-1}}, {{0, 3}, {1}},
                           {{5}, {0}},       {{}, {0}},        {{3, 1}, {1}},     {{20, 3000}, {-1}}};
  for (DType t : testing::kAllDTypes) {
    for (const DimCase& c : cases) {
      const Tensor a = testing::random_for_dtype(c.sizes, t, rng, -3, 3);
      const int64_t dim = c.dims[0];
      const auto expected = testing::reference_along_dim(c.sizes, values(a), dim, [](const std::vector<double>& row) {
        std::vector<double> r(row.size());
        std::partial_sum(row.begin(), row.end(), r.begin());
        return r;
      });
      for (bool nc : {false, true}) {
        const Tensor x = nc ? testing::noncontiguous_like(a) : a;
        const Tensor y = ingot::cumsum(x, dim);
        const std::string what = fmt::format("{} {} dim {}{}", t, shape_str(c.sizes), dim, nc ? " strided" : "");
        EXPECT_EQ(y.sizes(), c.sizes) << what;
        if (is_floating(t)) {
          EXPECT_EQ(y.dtype(), t) << what;
          testing::expect_close(y, expected, testing::default_atol(t) * 20, testing::default_rtol(t) * 2, what);
        } else {
          EXPECT_EQ(y.dtype(), DType::I64) << what;
          EXPECT_EQ(values(y), expected) << what;
        }
      }
    }
  }
  const Tensor i = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  EXPECT_EQ(ingot::cumsum(i, 0, DType::F32).dtype(), DType::F32);
  EXPECT_EQ(values(ingot::cumsum(i, 0, DType::F32)), (std::vector<double>{1, 3, 6}));
  EXPECT_THROW(ingot::cumsum(i, 1), ValueError);
}

}  // namespace
}  // namespace ingot
