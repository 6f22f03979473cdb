// The quantisers of exporters/quantizer.h on single weights: the group grid search, round
// to nearest (bit-identical to the kernels' own packing), and GPTQ against a numpy
// reference of the published algorithm (tests/fixtures/quant, made by
// tools/reference/make_gptq_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "../models/fixture_path.h"
#include "ingot/core/error.h"
#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantizer.h"
#include "ingot/exporters/quantizers/gptq.h"
#include "ingot/exporters/quantizers/group_grid.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters {
namespace {

std::vector<float> random_values(int64_t count, uint32_t seed, float outlier_every = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    v[size_t(i)] = normal(rng);
    if (outlier_every > 0 && i % int64_t(outlier_every) == 3) v[size_t(i)] *= 6.0f;
  }
  return v;
}

// sum_i importance_i * (w_i - dequantised_i)^2 of one group on `grid`.
double weighted_error(const std::vector<float>& w, const std::vector<float>& imp,
                      const quant::GroupGrid& grid, int bits, bool zp) {
  double e = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double d = w[i] - grid.scale * (quant::quantize_value(w[i], grid, bits, zp) - grid.zero);
    e += imp[i] * d * d;
  }
  return e;
}

TEST(GroupGrid, SearchIsNeverWorseThanTheRangeAndUsuallyBetter) {
  for (const auto& [bits, zp] : {std::pair{4, false}, std::pair{4, true}}) {
    const int64_t len = 32;
    double range_total = 0, searched_total = 0;
    for (uint32_t seed = 0; seed < 200; ++seed) {
      const std::vector<float> w = random_values(len, seed, 11);
      const std::vector<float> imp = random_values(len, seed + 1000);
      std::vector<float> importance(imp.size());
      for (size_t i = 0; i < imp.size(); ++i) importance[i] = imp[i] * imp[i] * 400 + 0.01f;
      const double range = weighted_error(w, importance, quant::range_grid(w.data(), len, bits, zp), bits, zp);
      const double searched = weighted_error(
          w, importance, quant::searched_grid(w.data(), importance.data(), len, bits, zp), bits, zp);
      EXPECT_LE(searched, range * (1 + 1e-6)) << bits << " " << zp << " seed " << seed;
      range_total += range;
      searched_total += searched;
    }
    EXPECT_LT(searched_total, 0.9 * range_total) << "bits " << bits << " zero points " << zp;
  }
}

TEST(GroupGrid, EightBitGridsKeepTheRange) {
  const std::vector<float> w = random_values(128, 5, 11);
  const std::vector<float> imp(128, 1.0f);
  const quant::GroupGrid r = quant::range_grid(w.data(), 128, 8, false);
  const quant::GroupGrid s = quant::searched_grid(w.data(), imp.data(), 128, 8, false);
  EXPECT_EQ(s.scale, r.scale);
  EXPECT_EQ(s.zero, r.zero);
}

TEST(GroupGrid, AllZeroGroupKeepsAUsableScale) {
  const std::vector<float> zeros(32, 0.0f);
  const quant::GroupGrid g = quant::searched_grid(zeros.data(), nullptr, 32, 4, false);
  EXPECT_EQ(g.scale, 1.0f);
  EXPECT_EQ(quant::quantize_value(0.0f, g, 4, false), 8);
}

WeightToQuantize job_of(const std::vector<float>& w, int64_t n, int64_t k, int bits, int64_t group,
                        bool zp) {
  WeightToQuantize j;
  j.name = "test.weight";
  j.data = w.data();
  j.n = n;
  j.k = k;
  j.bits = bits;
  j.group = group;
  j.zero_point = zp;
  return j;
}

TEST(Quantizers, RegistryAndRoundToNearestMatchesTheKernelPacking) {
  const std::vector<std::string> names = registered_quantizers();
  for (const char* expected : {"gptq", "rtn", "scale-search"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  QuantizerConfig c;
  c.scheme = "int4";
  c.method = "nope";
  EXPECT_THROW(make_quantizer(c, "native"), ValueError);
  c.method = "rtn";
  auto rtn = make_quantizer(c, "onnx");
  EXPECT_EQ(rtn->calibration(), CalibrationNeed::None);
  const int64_t n = 24, k = 128;
  const std::vector<float> w = random_values(n * k, 3, 17);
  for (const auto& [bits, zp] : {std::pair{4, false}, std::pair{4, true}, std::pair{8, false}}) {
    const int64_t group = bits == 8 ? k : 32;
    const QuantizedWeight q = rtn->quantize(job_of(w, n, k, bits, group, zp));
    const cpu::PackedBuffers got = cpu::pack_weight(q.values.data(), q.scales, q.zeros, n, k, bits);
    const cpu::PackedBuffers want = cpu::quantize_weight(w.data(), n, k, bits, group, zp);
    EXPECT_EQ(got.q, want.q) << bits;
    EXPECT_EQ(got.scales, want.scales) << bits;
    EXPECT_EQ(got.zeros, want.zeros) << bits;
  }
}

// tr((W - Q) H (W - Q)^T): the layer's mean squared output error on the inputs behind H.
double proxy_loss(const std::vector<float>& w, const QuantizedWeight& q, const float* h, int64_t n,
                  int64_t k, int64_t group, int bits) {
  std::vector<double> d(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      const int64_t g = r * (k / group) + c / group;
      const int zero = q.zeros.empty() ? 1 << (bits - 1) : q.zeros[size_t(g)];
      d[size_t(r * k + c)] = w[size_t(r * k + c)] - q.scales[size_t(g)] * (q.values[size_t(r * k + c)] - zero);
    }
  double loss = 0;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        loss += d[size_t(r * k + i)] * h[i * k + j] * d[size_t(r * k + j)];
  return loss;
}

std::vector<float> floats(const Tensor& t) {
  const Tensor c = contiguous(to(t, DType::F32));
  return {c.data<float>(), c.data<float>() + c.numel()};
}

TEST(Gptq, MatchesTheNumpyReference) {
  const std::string dir = testing::fixture_path("quant/");
  const Tensor wt = formats::load_npy(dir + "gptq_w.npy");
  const std::vector<float> w = floats(wt), h = floats(formats::load_npy(dir + "gptq_h.npy"));
  const int64_t n = wt.size(0), k = wt.size(1);
  struct Case {
    const char* name;
    int bits;
    int64_t group;
    bool zp, act_order;
  };
  for (const Case& c : {Case{"int4_g32", 4, 32, false, false}, Case{"int4_g32_act_order", 4, 32, false, true},
                        Case{"int4_g32_zp", 4, 32, true, false}, Case{"int8", 8, 64, false, false}}) {
    quant::GptqOptions o;
    o.act_order = c.act_order;
    o.search_scales = false;  // the reference's range grid
    o.block = 16;             // several blocks: the batched updates are exercised
    const QuantizedWeight got = quant::gptq_quantize(job_of(w, n, k, c.bits, c.group, c.zp), h.data(), o);
    const std::string prefix = dir + "gptq_" + c.name;
    QuantizedWeight want;
    const Tensor values = contiguous(formats::load_npy(prefix + "_values.npy"));
    want.values.assign(values.data<uint8_t>(), values.data<uint8_t>() + values.numel());
    want.scales = floats(formats::load_npy(prefix + "_scales.npy"));
    if (c.zp) {
      const Tensor z = contiguous(formats::load_npy(prefix + "_zeros.npy"));
      want.zeros.assign(z.data<uint8_t>(), z.data<uint8_t>() + z.numel());
    }
    // float32 here, float64 there: a value at a rounding tie may differ, rarely.
    int64_t same = 0;
    for (size_t i = 0; i < got.values.size(); ++i) same += got.values[i] == want.values[i];
    EXPECT_GE(double(same) / double(got.values.size()), 0.98) << c.name;
    for (size_t i = 0; i < got.scales.size(); ++i)
      EXPECT_NEAR(got.scales[i], want.scales[i], 1e-3 * std::fabs(want.scales[i]) + 1e-7) << c.name << " " << i;
    EXPECT_EQ(got.zeros, want.zeros) << c.name;
    const double lg = proxy_loss(w, got, h.data(), n, k, c.group, c.bits);
    const double lw = proxy_loss(w, want, h.data(), n, k, c.group, c.bits);
    EXPECT_NEAR(lg, lw, 0.02 * lw) << c.name;
  }
}

TEST(Gptq, LowersTheOutputErrorBelowRoundToNearest) {
  const std::string dir = testing::fixture_path("quant/");
  const Tensor wt = formats::load_npy(dir + "gptq_w.npy");
  const std::vector<float> w = floats(wt), h = floats(formats::load_npy(dir + "gptq_h.npy"));
  const int64_t n = wt.size(0), k = wt.size(1);
  QuantizerConfig c;
  c.scheme = "int4";
  const WeightToQuantize job = job_of(w, n, k, 4, 32, false);
  const double rtn = proxy_loss(w, make_quantizer(c, "native")->quantize(job), h.data(), n, k, 32, 4);
  for (const bool act_order : {false, true}) {
    quant::GptqOptions o;
    o.act_order = act_order;
    const double gptq = proxy_loss(w, quant::gptq_quantize(job, h.data(), o), h.data(), n, k, 32, 4);
    EXPECT_LT(gptq, 0.7 * rtn) << "act_order " << act_order;
  }
}

TEST(Gptq, InverseHessianFactorIsTheUpperCholeskyOfTheInverse) {
  const std::vector<float> h = floats(formats::load_npy(testing::fixture_path("quant/gptq_h.npy")));
  const int64_t k = 64;
  std::vector<int64_t> order(k);
  for (int64_t i = 0; i < k; ++i) order[size_t(i)] = k - 1 - i;  // any order
  const double damp = 0.01;
  const std::vector<double> u = quant::inverse_hessian_factor(h.data(), k, order, damp, "h");
  // (H_p + damp * mean diag * I) * U^T U == I, with H_p permuted and its dead diagonal 1.
  std::vector<double> hp(size_t(k * k));
  double mean = 0;
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j) hp[size_t(i * k + j)] = h[size_t(order[i] * k + order[j])];
    if (hp[size_t(i * k + i)] == 0) hp[size_t(i * k + i)] = 1;
    mean += hp[size_t(i * k + i)];
  }
  for (int64_t i = 0; i < k; ++i) hp[size_t(i * k + i)] += damp * mean / double(k);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < i; ++j) EXPECT_EQ(u[size_t(i * k + j)], 0.0);  // upper
    EXPECT_GT(u[size_t(i * k + i)], 0.0);
  }
  double worst = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;  // (H (U^T U))[i, j]
      for (int64_t l = 0; l < k; ++l) {
        double utu = 0;
        for (int64_t m = 0; m <= std::min(l, j); ++m) utu += u[size_t(m * k + l)] * u[size_t(m * k + j)];
        s += hp[size_t(i * k + l)] * utu;
      }
      worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
    }
  EXPECT_LT(worst, 1e-9);
}

TEST(Gptq, NotPositiveDefiniteIsAClearError) {
  std::vector<float> h(4 * 4, 0.0f);
  h[0] = 1.0f;
  h[1] = h[4] = 5.0f;  // |off-diagonal| > diagonal: indefinite
  h[5] = 1.0f;
  h[10] = h[15] = 1.0f;
  std::vector<int64_t> order = {0, 1, 2, 3};
  try {
    quant::inverse_hessian_factor(h.data(), 4, order, 1e-6, "layers.3.q_proj.weight");
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("layers.3.q_proj.weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::exporters
