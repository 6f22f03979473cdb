// Token choice: transformers' warpers (temperature, top-k, top-p) against the outputs
// transformers produced (tests/fixtures/generation/warpers), the seeded generator, and
// the sampling distribution.
#include "ingot/generation/sampling.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/formats/npy.h"

namespace ingot::generation {
namespace {

using ingot::testing::values;

struct WarperCase {
  const char* file;
  SamplingParams params;
};

// Every case of make_generation_fixtures.py: the same tokens removed (-inf) and the kept
// logits equal within 1e-6 (float32 arithmetic on both sides).
TEST(Warpers, MatchTransformers) {
  const std::string dir = ingot::testing::fixture_path("generation/warpers/");
  Tensor logits = formats::load_npy(dir + "logits.npy");  // [4, 32] float32
  const WarperCase cases[] = {
      {"temperature_0.7", {0.7, 0, 1.0}}, {"top_k_5", {1.0, 5, 1.0}},
      {"top_k_1", {1.0, 1, 1.0}},         {"top_p_0.8", {1.0, 0, 0.8}},
      {"top_p_0.3", {1.0, 0, 0.3}},       {"temperature_1.3_top_k_10_top_p_0.9", {1.3, 10, 0.9}},
  };
  for (const auto& c : cases) {
    std::vector<double> expected = values(formats::load_npy(dir + c.file + ".npy"));
    std::vector<double> got = values(warp_logits(logits, c.params));
    ASSERT_EQ(got.size(), expected.size());
    int removed = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      if (std::isinf(expected[i])) {
        EXPECT_TRUE(std::isinf(got[i]) && got[i] < 0) << c.file << " element " << i;
        ++removed;
      } else {
        EXPECT_NEAR(got[i], expected[i], 1e-6 * std::max(1.0, std::abs(expected[i])))
            << c.file << " element " << i;
      }
    }
    if (std::string(c.file).find("top") != std::string::npos) {
      EXPECT_GT(removed, 0) << c.file;
    }
  }
}

// min-p, the repetition penalty over seen_ids.npy, and the whole chain transformers'
// generate builds for do_sample with every setting (repetition penalty, temperature,
// top-k, top-p, min-p: processors.json records its order): same removals, kept logits
// within 1e-6.
TEST(Processors, MatchTransformers) {
  const std::string dir = ingot::testing::fixture_path("generation/warpers/");
  Tensor logits = formats::load_npy(dir + "logits.npy");  // [4, 32] float32
  std::vector<double> seen_values = values(formats::load_npy(dir + "seen_ids.npy"));  // [4, 12]
  const int64_t rows = logits.size(0), vocab = logits.size(1), seen_len = 12;
  ASSERT_EQ(seen_values.size(), size_t(rows * seen_len));
  SamplingParams min_p_01{1.0, 0, 1.0, 0.1}, min_p_05{1.0, 0, 1.0, 0.5};
  SamplingParams penalty_15{1.0, 0, 1.0, 0.0, 1.5}, penalty_07{1.0, 0, 1.0, 0.0, 0.7};
  SamplingParams chain{0.8, 12, 0.95, 0.05, 1.3};
  const std::pair<const char*, SamplingParams> cases[] = {
      {"min_p_0.1", min_p_01},
      {"min_p_0.5", min_p_05},
      {"repetition_penalty_1.5", penalty_15},
      {"repetition_penalty_0.7", penalty_07},
      {"full_chain", chain},
  };
  for (const auto& [file, params] : cases) {
    const bool sampling = std::string(file).find("repetition") == std::string::npos;
    Tensor got = clone(logits);
    float* data = got.data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> seen(seen_values.begin() + r * seen_len,
                                seen_values.begin() + (r + 1) * seen_len);
      process(std::span<float>(data + r * vocab, size_t(vocab)), seen, params, sampling);
    }
    std::vector<double> expected = values(formats::load_npy(dir + file + ".npy"));
    std::vector<double> actual = values(got);
    int removed = 0, changed = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      if (std::isinf(expected[i])) {
        EXPECT_TRUE(std::isinf(actual[i]) && actual[i] < 0) << file << " element " << i;
        ++removed;
      } else {
        EXPECT_NEAR(actual[i], expected[i], 1e-6 * std::max(1.0, std::abs(expected[i])))
            << file << " element " << i;
      }
      changed += expected[i] != values(logits)[i];
    }
    EXPECT_GT(changed, 0) << file;
    if (sampling) {
      EXPECT_GT(removed, 0) << file;
    }
  }
}

TEST(Processors, RepetitionPenaltyEdges) {
  std::vector<float> x{2, -2, 0, 4};
  const std::vector<int64_t> seen{0, 1, 1, 1, 2, 99, -3};  // repeats count once; others ignored
  apply_repetition_penalty(x, seen, 2.0);
  EXPECT_EQ(x, (std::vector<float>{1, -4, 0, 4}));
  EXPECT_THROW(apply_repetition_penalty(x, seen, 0.0), ValueError);
  EXPECT_THROW(min_p_filter(x, 1.5), ValueError);
  std::vector<float> y{0, 0, std::log(0.5f)};  // probabilities 0.4, 0.4, 0.2
  min_p_filter(y, 0.45);                       // threshold 0.18: nothing below it
  EXPECT_FALSE(std::isinf(y[2]));
  min_p_filter(y, 0.6);
  EXPECT_TRUE(std::isinf(y[2]));
  EXPECT_FALSE(std::isinf(y[0]) || std::isinf(y[1]));
  // Greedy with a penalty: next_token picks the best penalised logit.
  Rng rng(0);
  std::vector<float> z{3.0f, 2.0f};
  EXPECT_EQ(
      next_token(z, std::vector<int64_t>{0}, SamplingParams{1.0, 0, 1.0, 0.0, 2.0}, false, rng), 1);
}

TEST(Warpers, TopKKeepsTiesAndClamps) {
  std::vector<float> x{1, 3, 3, 2, 3};
  top_k_filter(x, 2);  // the 2nd best is 3: all three 3s stay
  EXPECT_EQ(std::count_if(x.begin(), x.end(), [](float v) { return std::isinf(v); }), 2);
  std::vector<float> y{1, 2};
  top_k_filter(y, 10);
  EXPECT_EQ(y, (std::vector<float>{1, 2}));
  EXPECT_THROW(top_k_filter(y, -1), ValueError);
}

TEST(Warpers, TopPKeepsTheSmallestSetReachingP) {
  // probabilities 0.5, 0.25, 0.125, 0.125
  const float l2 = std::log(2.0f);
  std::vector<float> x{3 * l2, 2 * l2, l2, l2};
  std::vector<float> a = x;
  top_p_filter(a, 0.7);  // 0.5 < 0.7 <= 0.75: keep the first two
  EXPECT_FALSE(std::isinf(a[0]) || std::isinf(a[1]));
  EXPECT_TRUE(std::isinf(a[2]) && std::isinf(a[3]));
  std::vector<float> b = x;
  top_p_filter(b, 0.01);  // the best token always stays
  EXPECT_FALSE(std::isinf(b[0]));
  EXPECT_TRUE(std::isinf(b[1]) && std::isinf(b[2]) && std::isinf(b[3]));
  EXPECT_THROW(top_p_filter(b, 0.0), ValueError);
  EXPECT_THROW(apply_temperature(b, 0.0), ValueError);
}

// Known answers of xoshiro256** seeded by splitmix64(42), from an independent Python
// implementation of the published algorithms.
TEST(Rng, KnownAnswersAndDeterminism) {
  Rng rng(42);
  EXPECT_EQ(rng.next(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(rng.next(), 0x6104d9866d113a7eULL);
  EXPECT_EQ(rng.next(), 0xae17533239e499a1ULL);
  Rng a(7), b(7), c(8);
  bool all_same = true;
  for (int i = 0; i < 100; ++i) {
    const double u = a.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_EQ(u, b.uniform());
    all_same = all_same && u == c.uniform();
  }
  EXPECT_FALSE(all_same);
}

// 40000 seeded draws: each frequency within 0.01 of its probability (about 4 standard
// deviations; deterministic for the seed), and removed tokens never drawn.
TEST(Sampling, FollowsTheDistribution) {
  const float l2 = std::log(2.0f);
  const float minus_inf = -std::numeric_limits<float>::infinity();
  std::vector<float> logits{3 * l2, 2 * l2, l2, l2, minus_inf};
  const double p[] = {0.5, 0.25, 0.125, 0.125, 0};
  Rng rng(3);
  int counts[5] = {};
  const int n = 40000;
  for (int i = 0; i < n; ++i) ++counts[sample(logits, rng)];
  for (int t = 0; t < 5; ++t) EXPECT_NEAR(double(counts[t]) / n, p[t], 0.01) << "token " << t;
  EXPECT_EQ(counts[4], 0);
  EXPECT_EQ(argmax(std::vector<float>{1, 5, 5, 2}), 1);  // first maximum
}

}  // namespace
}  // namespace ingot::generation
