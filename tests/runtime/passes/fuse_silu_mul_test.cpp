// The silu * up fusion (runtime/passes/fuse_silu_mul.h): on decoder fixtures every layer's
// mul(silu(gate), up) becomes one ingot::silu_mul, the exported program is unchanged,
// and the fused program's logits and cache writes equal the unfused one's (f32: 1e-5 of
// the logits' scale; bf16: the fused op rounds once where the pair rounds twice, so
// 2 bf16 steps of the scale). A silu with a second use is left alone, and the fused
// program decomposes back to silu + mul.
#include "ingot/runtime/passes/fuse_silu_mul.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ingot/export/export.h"
#include "ingot/export/passes.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/fused.h"
#include "ingot/runtime/program_module.h"
#include "models/fixture_path.h"

namespace ingot {
namespace {

int count_target(const ExportedProgram& p, const std::string& target) {
  int n = 0;
  for (const ir::Node& node : p.graph->nodes()) n += node.target == target;
  return n;
}

double max_abs(const Tensor& t) {
  const Tensor f = contiguous(to(t, DType::F32));
  double m = 0;
  for (int64_t i = 0; i < f.numel(); ++i) m = std::max(m, double(std::abs(f.data<float>()[i])));
  return m;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor fa = contiguous(to(a, DType::F32)), fb = contiguous(to(b, DType::F32));
  EXPECT_EQ(fa.sizes(), fb.sizes());
  double m = 0;
  for (int64_t i = 0; i < fa.numel(); ++i)
    m = std::max(m, double(std::abs(fa.data<float>()[i] - fb.data<float>()[i])));
  return m;
}

class FuseSiluMulTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FuseSiluMulTest, EveryGatedMlpFusedAndEqualToTheUnfusedProgram) {
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  exporters::GenerationExportOptions o;
  o.max_cache_len = 16;
  const ExportedProgram decode = (exporters::NativeExporter().export_for_generation(
                                      *model, exporters::NativeExportConfig(), o))
                                     .package()
                                     .at("decode");
  const std::string before = decode.print();
  const int silus = count_target(decode, "silu");
  ASSERT_GT(silus, 0) << GetParam() << " has no silu";
  int fused = 0;
  const ExportedProgram f = runtime::fuse_silu_mul(decode, &fused);
  EXPECT_EQ(decode.print(), before) << "the exported program changed";
  EXPECT_EQ(fused, silus) << "one fusion per gated MLP";
  EXPECT_EQ(count_target(f, "silu"), 0);
  EXPECT_EQ(count_target(f, "ingot::silu_mul"), silus);
  EXPECT_EQ(count_target(f, "mul.Tensor"), count_target(decode, "mul.Tensor") - silus);

  runtime::ProgramModule plain(decode), fast(f);
  nn::StaticCache cache_plain(*model->cache_spec(), 1, 16), cache_fast(*model->cache_spec(), 1, 16);
  const bool f32 = decode.graph->value(decode.graph->outputs[0]).dtype == DType::F32;
  for (int64_t tokens : {5, 1}) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < tokens; ++i) v.push_back(3 + 7 * i);
    const Tensor ids = Tensor::from_vector(v, {1, tokens});
    const Tensor a = plain(ids, cache_plain).at(0);
    const Tensor b = fast(ids, cache_fast).at(0);
    const double scale = std::max(max_abs(a), 1.0);
    EXPECT_LE(max_abs_diff(a, b), (f32 ? 1e-5 : 2 * std::ldexp(1.0, -8)) * scale)
        << GetParam() << " tokens " << tokens;
  }
  const auto kv_plain = cache_plain.named_tensors(), kv_fast = cache_fast.named_tensors();
  ASSERT_EQ(kv_plain.size(), kv_fast.size());
  for (size_t i = 0; i < kv_plain.size(); ++i) {
    const double scale = std::max(max_abs(kv_plain[i].second), 1.0);
    EXPECT_LE(max_abs_diff(kv_plain[i].second, kv_fast[i].second),
              (f32 ? 1e-5 : 2 * std::ldexp(1.0, -8)) * scale)
        << kv_plain[i].first;
  }

  // Decomposed again, the fused program is the unfused computation.
  ExportedProgram back = f;
  decompose_to_core(back);
  EXPECT_EQ(count_target(back, "ingot::silu_mul"), 0);
  EXPECT_EQ(count_target(back, "silu"), silus);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FuseSiluMulTest,
                         ::testing::Values("llama", "llama_llama3_rope_tied_bf16", "qwen3",
                                           "mistral_sliding_window"));

TEST(FuseSiluMul, ASiluWithASecondUseOrABroadcastIsLeftAlone) {
  const Tensor g = Tensor::from_vector<float>({1, -2, 3, 0.5f}, {1, 4});
  const Tensor u = Tensor::from_vector<float>({2, 2, 2, 2}, {1, 4});
  const Tensor row = Tensor::from_vector<float>({3}, {1, 1});
  // silu(g) feeds both a mul and an add: fusing would compute it twice.
  ExportedProgram twice = export_(
      nullptr,
      [](const Tensor& g, const Tensor& u) {
        const Tensor s = silu(g);
        return add(mul(s, u), s);
      },
      std::tuple{g, u});
  int fused = -1;
  runtime::fuse_silu_mul(twice, &fused);
  EXPECT_EQ(fused, 0);
  // silu(g) * row broadcasts [1, 4] * [1, 1]: not the fused op's same-shape form.
  ExportedProgram broadcast = export_(
      nullptr, [](const Tensor& g, const Tensor& r) { return mul(silu(g), r); },
      std::tuple{g, row});
  runtime::fuse_silu_mul(broadcast, &fused);
  EXPECT_EQ(fused, 0);
  // up * silu(g), operands swapped: fused.
  ExportedProgram swapped = export_(
      nullptr, [](const Tensor& g, const Tensor& u) { return mul(u, silu(g)); }, std::tuple{g, u});
  const ExportedProgram f = runtime::fuse_silu_mul(swapped, &fused);
  EXPECT_EQ(fused, 1);
  runtime::ProgramModule m(f);
  EXPECT_LE(max_abs_diff(m(g, u).at(0), mul(u, silu(g))), 1e-6);
}

}  // namespace
}  // namespace ingot
