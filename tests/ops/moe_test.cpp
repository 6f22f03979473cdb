// moe_experts against a double-precision per-token reference: every token's chosen
// experts run as plain matrix products, weighted and summed. Covers f32 and bf16, a
// non-contiguous input and weights, an expert no token chooses, and the errors.
#include <gtest/gtest.h>

#include "op_test_util.h"

namespace ingot {
namespace {

using testing::values;

struct MoeCase {
  Tensor x, index, weight;
  std::vector<Tensor> gate, up, down;
};

// T tokens, H hidden, I intermediate, E experts (expert E - 1 is never chosen), k per token.
MoeCase make_case(int64_t T, int64_t H, int64_t I, int64_t E, int64_t k, DType dtype, bool strided) {
  std::mt19937 rng(uint32_t(T * 31 + E));
  MoeCase c;
  c.x = testing::random_tensor({T, H}, dtype, rng, -1, 1);
  std::vector<int64_t> idx;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < k; ++j) idx.push_back((t * 3 + j * 2 + (t % 2)) % (E - 1));
  }
  c.index = Tensor::from_vector<int64_t>(idx, {T, k});
  c.weight = testing::random_tensor({T, k}, dtype, rng, 0, 1);
  for (int64_t e = 0; e < E; ++e) {
    c.gate.push_back(testing::random_tensor({I, H}, dtype, rng, -0.5, 0.5));
    c.up.push_back(testing::random_tensor({I, H}, dtype, rng, -0.5, 0.5));
    c.down.push_back(testing::random_tensor({H, I}, dtype, rng, -0.5, 0.5));
  }
  if (strided) {
    c.x = testing::noncontiguous_like(c.x);
    c.gate[0] = testing::noncontiguous_like(c.gate[0]);
    c.down[1] = testing::noncontiguous_like(c.down[1]);
  }
  return c;
}

std::vector<double> reference(const MoeCase& c, bool silu) {
  const int64_t T = c.x.size(0), H = c.x.size(1), k = c.index.size(1), I = c.gate[0].size(0);
  auto x = values(c.x), w = values(c.weight), idx = values(c.index);
  std::vector<double> out(size_t(T * H), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < k; ++j) {
      const size_t e = size_t(idx[size_t(t * k + j)]);
      auto g = values(c.gate[e]), u = values(c.up[e]), d = values(c.down[e]);
      std::vector<double> h(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) {
        double gv = 0, uv = 0;
        for (int64_t q = 0; q < H; ++q) {
          gv += g[size_t(i * H + q)] * x[size_t(t * H + q)];
          uv += u[size_t(i * H + q)] * x[size_t(t * H + q)];
        }
        const double a = silu ? gv / (1 + std::exp(-gv))
                              : 0.5 * gv * (1 + std::tanh(0.7978845608028654 * (gv + 0.044715 * gv * gv * gv)));
        h[size_t(i)] = a * uv;
      }
      for (int64_t o = 0; o < H; ++o) {
        double y = 0;
        for (int64_t i = 0; i < I; ++i) y += d[size_t(o * I + i)] * h[size_t(i)];
        out[size_t(t * H + o)] += w[size_t(t * k + j)] * y;
      }
    }
  }
  return out;
}

TEST(MoeExperts, MatchesPerTokenReference) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (bool strided : {false, true}) {
      for (bool silu : {true, false}) {
        MoeCase c = make_case(7, 12, 10, 5, 2, dtype, strided);
        Tensor out = moe_experts(c.x, c.index, c.weight, c.gate, c.up, c.down,
                                 silu ? "silu" : "gelu_tanh");
        EXPECT_EQ(out.dtype(), dtype);
        EXPECT_EQ(out.sizes(), (IntShape{7, 12}));
        const double tol = dtype == DType::F32 ? 1e-5 : 2e-2;
        testing::expect_close(out, reference(c, silu), tol, tol, "moe_experts");
      }
    }
  }
}

TEST(MoeExperts, ZeroTokensAndBadArguments) {
  MoeCase c = make_case(3, 8, 6, 4, 2, DType::F32, false);
  Tensor none = moe_experts(slice(c.x, 0, 0, 0), slice(c.index, 0, 0, 0),
                            slice(c.weight, 0, 0, 0), c.gate, c.up, c.down);
  EXPECT_EQ(none.sizes(), (IntShape{0, 8}));
  Tensor bad = Tensor::from_vector<int64_t>({0, 1, 2, 9, 1, 0}, {3, 2});
  EXPECT_THROW(moe_experts(c.x, bad, c.weight, c.gate, c.up, c.down), ValueError);
  std::vector<Tensor> short_list(c.gate.begin(), c.gate.end() - 1);
  EXPECT_THROW(moe_experts(c.x, c.index, c.weight, short_list, c.up, c.down), ValueError);
  EXPECT_THROW(moe_experts(c.x, c.index, c.weight, c.gate, c.up, c.down, "relu"),
               NotSupportedError);
  EXPECT_THROW(moe_experts(c.x, c.index, c.weight, c.up, c.down, c.gate), ShapeError);
}

}  // namespace
}  // namespace ingot
