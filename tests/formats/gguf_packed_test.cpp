// GGUF blocks kept packed (formats/gguf_packed.h): Q4_0 and Q8_0 repacked into ingot's
// int4 / int8 group-32 layout dequantise, through every kernel table's dequantiser and
// through the op's decomposition, to exactly the floats of the float path (gguf_tensor),
// which equal the gguf package's references bit for bit (gguf_dequant_test.cpp). Tolerance:
// none, since (q - z) * s is the very float32 product ggml computes.
#include "ingot/formats/gguf_packed.h"

#include <gtest/gtest.h>

#include <cstring>

#include "error_of.h"
#include "ingot/formats/gguf_tensor.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional/quantized.h"

namespace ingot::formats {
namespace {

const std::string kDir = std::string(INGOT_FIXTURES_DIR) + "/gguf/";

// Number of floats of `got` whose bits differ from `want` (first few reported).
int bit_mismatches(const float* got, const float* want, int64_t n, const std::string& what) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0 && ++bad <= 5)
      ADD_FAILURE() << what << "[" << i << "] " << got[i] << " != " << want[i];
  return bad;
}

cpu::PackedWeight kernel_view(const GgufPackedTensor& p) {
  cpu::PackedWeight w;
  w.q = p.qweight.data<uint8_t>();
  w.scales = p.scales.data<float>();
  w.bits = p.layout.bits;
  w.n = p.qweight.size(0);
  w.k = p.scales.size(1) * p.layout.group;
  w.group = p.layout.group;
  return w;
}

class GgufPacked : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufPacked, DequantisesBitForBitToTheFloatPath) {
  GgufFile f = GgufFile::open(kDir + "tensors.gguf");
  const GgufTensorInfo& info = f.tensor_info(GetParam());
  ASSERT_TRUE(gguf_keeps_packed(info));
  const GgufPackedTensor p = gguf_packed_tensor(f, info);
  const bool q4 = std::string(GetParam()) == "Q4_0";
  EXPECT_EQ(p.layout, (PackedLayout{q4 ? 4 : 8, 32}));
  EXPECT_EQ(p.qweight.dtype(), DType::U8);
  EXPECT_EQ(p.qweight.sizes(), (IntShape{2, q4 ? 128 : 256}));
  EXPECT_EQ(p.scales.sizes(), (IntShape{2, 8}));
  const Tensor reference = load_npy(kDir + GetParam() + ".npy");  // the gguf package's
  const Tensor float_path = gguf_tensor(f, info);
  ASSERT_EQ(bit_mismatches(float_path.data<float>(), reference.data<float>(), 512, "float path"),
            0);
  const cpu::PackedWeight w = kernel_view(p);
  for (cpu::QuantIsa isa : {cpu::QuantIsa::Scalar, cpu::QuantIsa::Avx2, cpu::QuantIsa::Avx512}) {
    if (!cpu::quant_isa_supported(isa)) continue;
    cpu::set_quant_isa(isa);
    std::vector<float> got(512);
    cpu::dequantize_rows(w, 0, 2, got.data());
    EXPECT_EQ(bit_mismatches(got.data(), reference.data<float>(), 512,
                             "table " + std::to_string(int(isa))),
              0);
  }
  cpu::set_quant_isa(cpu::default_quant_isa());
  const Tensor decomposed = dequantize_weight(p.qweight, p.scales, Tensor(), p.layout.bits, 32);
  EXPECT_EQ(bit_mismatches(decomposed.data<float>(), reference.data<float>(), 512, "decomposition"),
            0);
}

INSTANTIATE_TEST_SUITE_P(Types, GgufPacked, ::testing::Values("Q4_0", "Q8_0"),
                         [](const auto& info) { return std::string(info.param); });

TEST(GgufPackedTable, OnlyExactMappingsStayPacked) {
  EXPECT_EQ(gguf_packed_layout(GgmlType::Q4_0), (PackedLayout{4, 32}));
  EXPECT_EQ(gguf_packed_layout(GgmlType::Q8_0), (PackedLayout{8, 32}));
  // d * q + m is (q - z) * s only when m / d is an integer; 5-bit levels; two-level scales.
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q4_1, GgmlType::Q5_0,
                     GgmlType::Q5_1, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                     GgmlType::Q6_K})
    EXPECT_FALSE(gguf_packed_layout(t).has_value()) << ggml_type_name(t);
}

TEST(GgufPackedTable, OtherTensorsAreNamedWhenAskedToPack) {
  GgufFile f = GgufFile::open(kDir + "tensors.gguf");
  EXPECT_FALSE(gguf_keeps_packed(f.tensor_info("Q4_1")));
  const std::string e =
      ingot::testing::error_of<ValueError>([&] { gguf_packed_tensor(f, f.tensor_info("Q4_1")); });
  EXPECT_NE(e.find("'Q4_1'"), std::string::npos) << e;
  EXPECT_NE(e.find("tensors.gguf"), std::string::npos) << e;
}

}  // namespace
}  // namespace ingot::formats
