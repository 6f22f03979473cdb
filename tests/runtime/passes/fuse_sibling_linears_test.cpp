// The sibling-linear fusion (runtime/passes/fuse_sibling_linears.h): on quantised exports of
// decoder fixtures every attention block's q / k / v becomes one
// ingot::quantized_linear3 and every gated MLP's gate / up one ingot::quantized_linear2,
// the exported program is unchanged, and the fused program's logits and cache writes
// equal the unfused one's exactly (the same kernels over the same rows), in both
// activation modes; decomposed, the fused program is the separate linears again. The
// float rewrite (fuse_sibling_float_linears) likewise on f32 and bf16 exports.
#include "ingot/runtime/passes/fuse_sibling_linears.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ingot/export/export.h"
#include "ingot/export/passes.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/ops/cpu/gemm.h"
#include "ingot/ops/cpu/quantized_gemv.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"
#include "models/fixture_path.h"

namespace ingot {
namespace {

int count_target(const ExportedProgram& p, const std::string& target) {
  int n = 0;
  for (const ir::Node& node : p.graph->nodes()) n += node.target == target;
  return n;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const Tensor ca = contiguous(a), cb = contiguous(b);
  return std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()) == 0;
}

struct Case {
  const char* fixture;
  const char* scheme;
  bool zero_point;
};

class FuseSiblingLinearsTest : public ::testing::TestWithParam<Case> {};

TEST_P(FuseSiblingLinearsTest, QkvAndGateUpFusedAndEqualToTheUnfusedProgram) {
  const Case c = GetParam();
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + c.fixture));
  exporters::NativeExportConfig config;
  config.quantizer.scheme = c.scheme;
  config.quantizer.zero_point = c.zero_point;
  exporters::GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode =
      (exporters::NativeExporter().export_for_generation(*model, config, o)).package().at("decode");
  const std::string before = decode.print();
  const int linears = count_target(decode, "ingot::quantized_linear");
  const int layers = int(model->cache_spec()->num_layers);
  ASSERT_GT(linears, 0);
  int fused = 0;
  const ExportedProgram f = runtime::fuse_sibling_linears(decode, &fused);
  EXPECT_EQ(decode.print(), before) << "the exported program changed";
  EXPECT_EQ(fused, 2 * layers) << "q / k / v and gate / up in every layer";
  EXPECT_EQ(count_target(f, "ingot::quantized_linear3"), layers);
  EXPECT_EQ(count_target(f, "ingot::quantized_linear2"), layers);
  // o_proj and down_proj (and a quantised lm_head) stay single.
  EXPECT_EQ(count_target(f, "ingot::quantized_linear"), linears - 5 * layers);

  for (cpu::QuantActivations mode : {cpu::QuantActivations::Float, cpu::QuantActivations::Int8}) {
    cpu::ScopedQuantActivations scoped(mode);
    runtime::ProgramModule plain(decode), fast(f);
    nn::StaticCache cache_plain(*model->cache_spec(), 1, 16),
        cache_fast(*model->cache_spec(), 1, 16);
    for (int64_t tokens : {6, 1}) {  // prefill-sized (Float: the dequantise path) and decode
      std::vector<int64_t> v;
      for (int64_t i = 0; i < tokens; ++i) v.push_back(3 + 7 * i);
      const Tensor ids = Tensor::from_vector(v, {1, tokens});
      EXPECT_TRUE(bit_equal(plain(ids, cache_plain).at(0), fast(ids, cache_fast).at(0)))
          << c.fixture << " " << c.scheme << " tokens " << tokens << " int8 activations "
          << (mode == cpu::QuantActivations::Int8);
    }
    const auto kv_plain = cache_plain.named_tensors(), kv_fast = cache_fast.named_tensors();
    ASSERT_EQ(kv_plain.size(), kv_fast.size());
    for (size_t i = 0; i < kv_plain.size(); ++i)
      EXPECT_TRUE(bit_equal(kv_plain[i].second, kv_fast[i].second)) << kv_plain[i].first;
  }

  ExportedProgram back = f;
  decompose_to_core(back);
  EXPECT_EQ(count_target(back, "ingot::quantized_linear2"), 0);
  EXPECT_EQ(count_target(back, "ingot::quantized_linear3"), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FuseSiblingLinearsTest,
                         ::testing::Values(Case{"qwen3", "int8", false},
                                           Case{"qwen3", "int4", false},
                                           Case{"llama", "int4", true}));

// Float programs (f32, bf16): the float rewrite makes the same groups of ingot::linear3 /
// ingot::linear2; logits and cache writes equal the unfused program's exactly (prefill and
// decode); decomposed, the fused program is the separate linears again.
TEST(FuseSiblingFloatLinears, QkvAndGateUpFusedAndEqualToTheUnfusedProgram) {
  for (DType dtype : {DType::F32, DType::BF16}) {
    auto model = models::from_pretrained(testing::fixture_path("models/qwen3"), {dtype});
    exporters::GenerationExportOptions o;
    o.max_cache_len = 16;
    const ExportedProgram decode = (exporters::NativeExporter().export_for_generation(
                                        *model, exporters::NativeExportConfig(), o))
                                       .package()
                                       .at("decode");
    const std::string before = decode.print();
    const int linears = count_target(decode, "linear");
    const int layers = int(model->cache_spec()->num_layers);
    int fused = 0;
    const ExportedProgram f = runtime::fuse_sibling_float_linears(decode, &fused);
    EXPECT_EQ(decode.print(), before) << "the exported program changed";
    EXPECT_EQ(fused, 2 * layers) << dtype_name(dtype);
    EXPECT_EQ(count_target(f, "ingot::linear3"), layers);
    EXPECT_EQ(count_target(f, "ingot::linear2"), layers);
    EXPECT_EQ(count_target(f, "linear"), linears - 5 * layers);  // o, down, lm_head stay

    // Every GEMM table the CPU runs (the AVX2 one reads rows as four streams).
    for (cpu::GemmIsa isa : {cpu::GemmIsa::Scalar, cpu::GemmIsa::Avx2, cpu::GemmIsa::Avx512}) {
      if (isa > cpu::best_supported_gemm_isa()) continue;
      cpu::set_gemm_isa(isa);
      runtime::ProgramModule plain(decode), fast(f);
      nn::StaticCache cache_plain(*model->cache_spec(), 1, 16),
          cache_fast(*model->cache_spec(), 1, 16);
      for (int64_t tokens : {6, 1}) {
        std::vector<int64_t> v;
        for (int64_t i = 0; i < tokens; ++i) v.push_back(3 + 7 * i);
        const Tensor ids = Tensor::from_vector(v, {1, tokens});
        EXPECT_TRUE(bit_equal(plain(ids, cache_plain).at(0), fast(ids, cache_fast).at(0)))
            << dtype_name(dtype) << " tokens " << tokens << " " << cpu::gemm_isa_name(isa);
      }
      const auto kv_plain = cache_plain.named_tensors(), kv_fast = cache_fast.named_tensors();
      for (size_t i = 0; i < kv_plain.size(); ++i)
        EXPECT_TRUE(bit_equal(kv_plain[i].second, kv_fast[i].second)) << kv_plain[i].first;
    }
    cpu::set_gemm_isa(cpu::best_supported_gemm_isa());

    ExportedProgram back = f;
    decompose_to_core(back);
    EXPECT_EQ(count_target(back, "ingot::linear2") + count_target(back, "ingot::linear3"), 0);
  }
}

// Quantised linears are not float ones: the float rewrite leaves them to the other.
TEST(FuseSiblingFloatLinears, QuantisedLinearsAreLeftAlone) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  exporters::NativeExportConfig config;
  config.quantizer.scheme = "int4";
  exporters::GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode =
      (exporters::NativeExporter().export_for_generation(*model, config, o)).package().at("decode");
  int fused = -1;
  const ExportedProgram f = runtime::fuse_sibling_float_linears(decode, &fused);
  EXPECT_EQ(fused, 0);
  EXPECT_EQ(f.print(), decode.print());
}

// Without quantised linears (an f32 export) nothing changes.
TEST(FuseSiblingLinears, FloatProgramIsLeftAlone) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  exporters::GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode = (exporters::NativeExporter().export_for_generation(
                                      *model, exporters::NativeExportConfig(), o))
                                     .package()
                                     .at("decode");
  int fused = -1;
  const ExportedProgram f = runtime::fuse_sibling_linears(decode, &fused);
  EXPECT_EQ(fused, 0);
  EXPECT_EQ(f.print(), decode.print());
}

}  // namespace
}  // namespace ingot
