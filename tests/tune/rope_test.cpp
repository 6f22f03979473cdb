// torchtune-style rotary embeddings (tune/rope.h) against the reference table of
// tools/reference/make_tune_fixtures.py (Llama3ScaledRoPE, base 500000, scale 32), and
// the pair-rotation rule checked directly.
#include "ingot/tune/rope.h"

#include "ingot/ops/functional.h"
#include "test_util.h"

namespace ingot::tune {
namespace {

using testing::max_abs_diff;

TEST(TuneRope, Llama3ScaledCacheMatchesTorchtuneFormula) {
  auto file = testing::tune_fixture("attention.safetensors");
  Llama3ScaledRoPE rope(8, 64, 500000, {32, 1, 4, 8192});
  Tensor want = file.tensor("rope_cache");  // [64, 4, 2]
  EXPECT_EQ(rope.cache().sizes(), (IntShape{64, 4, 2}));
  EXPECT_LE(max_abs_diff(rope.cache(), want), 1e-6);
  // The scaling matters: the unscaled table differs.
  RotaryPositionalEmbeddings plain(8, 64, 500000);
  EXPECT_GT(max_abs_diff(plain.cache(), want), 1e-3);
  EXPECT_TRUE(rope.named_parameters().empty());
  EXPECT_TRUE(rope.state_dict().empty());  // the cache is a non-persistent buffer
}

TEST(TuneRope, RotatesAdjacentPairsByPositionTimesTheta) {
  RotaryPositionalEmbeddings rope(4, 16, 100.0);
  std::mt19937 rng(4);
  Tensor x = ingot::testing::random_tensor({1, 3, 2, 4}, DType::F32, rng);  // [b, s, n, d]
  Tensor out = rope.forward(x);
  const auto vx = ingot::testing::values(x), vo = ingot::testing::values(out);
  const double theta[2] = {1.0, 1.0 / std::pow(100.0, 0.5)};
  for (int s = 0; s < 3; ++s)
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 2; ++i) {
        const size_t at = size_t(((s * 2) + n) * 4 + 2 * i);
        const double c = std::cos(s * theta[i]), sn = std::sin(s * theta[i]);
        EXPECT_NEAR(vo[at], vx[at] * c - vx[at + 1] * sn, 1e-5);
        EXPECT_NEAR(vo[at + 1], vx[at + 1] * c + vx[at] * sn, 1e-5);
      }
}

TEST(TuneRope, InputPosSelectsRowsOfTheTablePerBatch) {
  RotaryPositionalEmbeddings rope(8, 32);
  std::mt19937 rng(5);
  Tensor x = ingot::testing::random_tensor({2, 3, 2, 8}, DType::F32, rng);
  // Batch 0 at positions 5..7, batch 1 at 0..2.
  Tensor pos = Tensor::from_vector<int64_t>({5, 6, 7, 0, 1, 2}, {2, 3});
  Tensor out = rope.forward(x, pos);
  // Row 1 equals the default positions 0..s-1.
  Tensor default_pos = rope.forward(slice(x, 0, 1, 2));
  EXPECT_LE(max_abs_diff(slice(out, 0, 1, 2), default_pos), 0.0);
  // Row 0 equals positions 5..7 of a longer sequence.
  Tensor longer = cat({zeros({1, 5, 2, 8}), slice(x, 0, 0, 1)}, 1);
  EXPECT_LE(max_abs_diff(slice(out, 0, 0, 1), slice(rope.forward(longer), 1, 5, 8)), 1e-6);
  EXPECT_THROW(rope.forward(x, Tensor::from_vector<int64_t>({0, 1, 40, 0, 1, 2}, {2, 3})),
               ValueError);
  EXPECT_THROW(rope.forward(zeros({2, 3, 2, 6})), ShapeError);
}

}  // namespace
}  // namespace ingot::tune
