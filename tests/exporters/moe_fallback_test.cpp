// The dense fallback of moe_experts (exporters/moe_fallback.h) equals the op's kernel,
// on random routing that leaves one expert unused, in f32 and bf16.
#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "ingot/exporters/moe_fallback.h"
#include "ingot/nn/moe.h"

namespace ingot::exporters {
namespace {

TEST(MoeFallback, DenseEqualsTheSelectedExpertKernel) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    std::mt19937 rng(7);
    const int64_t T = 6, H = 16, I = 12, E = 5, k = 2;
    Tensor x = testing::random_tensor({T, H}, dtype, rng, -1, 1);
    std::vector<int64_t> idx;
    for (int64_t t = 0; t < T; ++t) idx.insert(idx.end(), {t % 4, (t + 2) % 4});
    Tensor index = Tensor::from_vector<int64_t>(idx, {T, k});
    Tensor weight = testing::random_tensor({T, k}, dtype, rng, 0, 1);
    std::vector<Tensor> gate, up, down;
    for (int64_t e = 0; e < E; ++e) {
      gate.push_back(testing::random_tensor({I, H}, dtype, rng, -0.5, 0.5));
      up.push_back(testing::random_tensor({I, H}, dtype, rng, -0.5, 0.5));
      down.push_back(testing::random_tensor({H, I}, dtype, rng, -0.5, 0.5));
    }
    for (const char* act : {"silu", "gelu_tanh"}) {
      Tensor sparse = moe_experts(x, index, weight, gate, up, down, act);
      Tensor dense = nn::moe_experts_dense(x, index, weight, gate, up, down, act);
      const double tol = dtype == DType::F32 ? 1e-5 : 1e-2;
      testing::expect_close(dense, testing::values(sparse), tol, tol, act);
    }
  }
  OpImpl impl = dense_moe_experts_patch(nullptr);
  EXPECT_TRUE(bool(impl));
}

}  // namespace
}  // namespace ingot::exporters
