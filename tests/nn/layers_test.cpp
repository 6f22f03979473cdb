#include "ingot/nn/layers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../ops/op_test_util.h"
#include "ingot/nn/rotary.h"

namespace ingot::nn {
namespace {

using ingot::testing::values;

TEST(Layers, PlaceholdersHoldNoDataUntilLoaded) {
  Linear lin(4, 3, true);
  EXPECT_FALSE(lin.weight().has_storage());
  std::mt19937 rng(1);
  Tensor w = ingot::testing::random_tensor({3, 4}, DType::F32, rng);
  Tensor b = ingot::testing::random_tensor({3}, DType::F32, rng);
  lin.load_state_dict({{"weight", w}, {"bias", b}});
  Tensor x = ingot::testing::random_tensor({2, 4}, DType::F32, rng);
  auto vx = values(x), vw = values(w), vb = values(b);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int o = 0; o < 3; ++o) {
      double s = vb[o];
      for (int k = 0; k < 4; ++k) s += vx[i * 4 + k] * vw[o * 4 + k];
      expected.push_back(s);
    }
  ingot::testing::expect_close(lin.forward(x), expected, 1e-5, 1e-5);
}

// RMSNorm: x * rsqrt(mean(x^2) + eps) * w, and Gemma's variant * (1 + w).
TEST(Layers, RmsNormAndGemmaOffsetVariant) {
  std::mt19937 rng(2);
  Tensor x = ingot::testing::random_tensor({3, 8}, DType::F32, rng);
  Tensor w = ingot::testing::random_tensor({8}, DType::F32, rng);
  for (bool offset : {false, true}) {
    RMSNorm norm(8, 1e-6, DType::F32, offset);
    norm.load_state_dict({{"weight", w}});
    auto vx = values(x), vw = values(w);
    std::vector<double> expected;
    for (int r = 0; r < 3; ++r) {
      double ms = 0;
      for (int c = 0; c < 8; ++c) ms += vx[r * 8 + c] * vx[r * 8 + c] / 8;
      for (int c = 0; c < 8; ++c) {
        expected.push_back(vx[r * 8 + c] / std::sqrt(ms + 1e-6) * (offset ? 1 + vw[c] : vw[c]));
      }
    }
    ingot::testing::expect_close(norm.forward(x), expected, 1e-5, 1e-5, offset ? "gemma" : "plain");
  }
}

// Partial rotary: only the first rotary_dim channels of each head rotate, pairing
// channel i with i + rotary_dim / 2; the rest pass through unchanged.
TEST(Rotary, PartialRotaryRotatesLeadingChannelsOnly) {
  RopeConfig rope;
  rope.partial_rotary_factor = 0.5;
  RotaryEmbedding rotary(8, rope, 64);
  EXPECT_EQ(rotary.rotary_dim(), 4);
  Tensor pos = Tensor::from_vector<int64_t>({0, 3}, {1, 2});
  auto [cos, sin] = rotary.forward(pos, DType::F32);  // [1, 2, 4]
  std::mt19937 rng(3);
  Tensor q = ingot::testing::random_tensor({1, 1, 2, 8}, DType::F32, rng);
  auto [rq, rk] = apply_rotary(q, q, cos, sin);
  auto vq = values(q), out = values(rq);
  for (int s = 0; s < 2; ++s) {
    const double p = s == 0 ? 0 : 3;
    for (int i = 0; i < 2; ++i) {  // pairs (i, i + 2) inside the 4 rotary channels
      const double theta = p / std::pow(10000.0, 2.0 * i / 4);
      const double a = vq[s * 8 + i], b = vq[s * 8 + i + 2];
      EXPECT_NEAR(out[s * 8 + i], a * std::cos(theta) - b * std::sin(theta), 1e-5);
      EXPECT_NEAR(out[s * 8 + i + 2], b * std::cos(theta) + a * std::sin(theta), 1e-5);
    }
    for (int c = 4; c < 8; ++c) EXPECT_EQ(out[s * 8 + c], vq[s * 8 + c]);
  }
}

TEST(Rotary, RejectsUnsupportedRotaryDims) {
  RopeConfig rope;
  rope.partial_rotary_factor = 0.3;  // 8 * 0.3 = 2.4 -> 2: fine
  EXPECT_NO_THROW(RotaryEmbedding(8, rope, 16));
  rope.partial_rotary_factor = 0.1;  // 0 channels
  EXPECT_THROW(RotaryEmbedding(8, rope, 16), ValueError);
}

}  // namespace
}  // namespace ingot::nn
