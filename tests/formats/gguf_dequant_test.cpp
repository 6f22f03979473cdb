// Dequantisation of every supported ggml type against the gguf package's own values
// (tools/reference/make_gguf_fixtures.py). Tolerance: none. Every float must have the
// same bits (NaN only where the reference has NaN), since ingot computes the same float32
// operations in ggml's order.
#include "ingot/formats/gguf_dequant.h"
#include "ingot/formats/gguf_tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "error_of.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional.h"

namespace ingot::formats {
namespace {

const std::string kDir = std::string(INGOT_FIXTURES_DIR) + "/gguf/";

class GgufDequant : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufDequant, MatchesTheGgufPackageBitForBit) {
  GgufFile f = GgufFile::open(kDir + "tensors.gguf");
  const GgufTensorInfo& info = f.tensor_info(GetParam());
  Tensor got = gguf_tensor(f, info);
  EXPECT_EQ(got.sizes(), (IntShape{2, 256}));
  if (got.dtype() != DType::F32) got = to(got, DType::F32);
  Tensor want = load_npy(kDir + GetParam() + ".npy");
  ASSERT_EQ(want.numel(), got.numel());
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  int mismatches = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const bool same =
        std::isnan(w[i]) ? std::isnan(g[i]) : std::memcmp(&g[i], &w[i], sizeof(float)) == 0;
    if (!same && ++mismatches <= 5)
      ADD_FAILURE() << GetParam() << "[" << i << "] " << g[i] << " != " << w[i];
  }
  EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(EveryType, GgufDequant,
                         ::testing::Values("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0",
                                           "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"),
                         [](const auto& info) { return std::string(info.param); });

TEST(GgufDequantViews, PlainTypesAreViewsOfTheMapping) {
  GgufFile f = GgufFile::open(kDir + "tensors.gguf");
  Tensor t = gguf_tensor(f, f.tensor_info("F16"));
  EXPECT_EQ(t.dtype(), DType::F16);
  EXPECT_EQ(t.raw_data(), static_cast<const void*>(f.tensor_data(f.tensor_info("F16"))));
}

TEST(GgufDequantViews, UnsupportedTypesNameTheType) {
  const std::string e = ingot::testing::error_of<NotSupportedError>([] {
    float out[256];
    uint8_t block[66] = {};
    dequantize_row(GgmlType::IQ2_XXS, block, out, 256);
  });
  EXPECT_NE(e.find("IQ2_XXS"), std::string::npos) << e;
}

}  // namespace
}  // namespace ingot::formats
