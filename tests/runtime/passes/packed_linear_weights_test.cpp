// PackedLinearWeights (runtime/passes/packed_linear_weights.h): f32 linear weights become the
// GEMM's panels and their linears ingot::packed_linear, with the program's logits within
// f32 rounding of the original ones (prefill and decode, which share one packed copy); a
// weight something else reads (the lm_head tied to the embedding table) and weights
// under the size threshold or past the memory budget stay; INGOT_PACKED_WEIGHTS=0 turns
// the rewrite off.
#include "ingot/runtime/passes/packed_linear_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "ingot/export/export.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/nn/module.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/passes/pipeline.h"
#include "ingot/runtime/program_module.h"
#include "models/fixture_path.h"
#include "runtime/program_logits.h"

namespace ingot {
namespace {

using Programs = runtime::GenerationPackage;
using testing::program_logits;

Programs generation_programs(models::PretrainedModel& model) {
  exporters::GenerationExportOptions o;
  o.max_cache_len = 32;
  o.multi_token_decode = false;  // a prefill and a decode program
  return (exporters::NativeExporter().export_for_generation(model, exporters::NativeExportConfig{},
                                                            o))
      .package();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor ac = contiguous(to(a, DType::F32)), bc = contiguous(to(b, DType::F32));
  double d = 0;
  for (int64_t i = 0; i < ac.numel(); ++i)
    d = std::max(d, double(std::abs(ac.data<float>()[i] - bc.data<float>()[i])));
  return d;
}

int count_nodes(const ExportedProgram& p, const std::string& target) {
  int n = 0;
  for (const ir::Node& node : p.graph->nodes()) n += node.target == target;
  return n;
}

// The fixture's f32 weights packed at every linear; logits within 1e-5 of the largest.
void expect_packed_with_the_same_logits(const char* fixture, int linears_left) {
  if (packed_linear_width() == 0) GTEST_SKIP() << "the GEMM kernels here take no packed weights";
  auto model = models::from_pretrained(testing::fixture_path(fixture));
  const Programs programs = generation_programs(*model);
  runtime::PackedLinearWeights panels(/*min_elements=*/0);
  Programs rewritten;
  for (const auto& [component, p] : programs)
    rewritten.programs.emplace(component, panels.apply(p));
  const ExportedProgram& decode = rewritten.at("decode");
  EXPECT_EQ(count_nodes(decode, "linear"), linears_left) << fixture;
  EXPECT_EQ(count_nodes(decode, "ingot::packed_linear"),
            count_nodes(programs.at("decode"), "linear") - linears_left);
  EXPECT_EQ(panels.packed(), count_nodes(decode, "ingot::packed_linear"))
      << "prefill and decode share their panels";
  for (const auto& [name, t] : decode.state)
    if (t.dim() == 3) {
      EXPECT_EQ(rewritten.at("prefill").state.at(name).storage(), t.storage()) << name;
      EXPECT_EQ(t.size(2), packed_linear_width()) << name;
    }
  for (const char* component : {"prefill", "decode"}) {
    const std::vector<int64_t> ids = component == std::string("decode")
                                         ? std::vector<int64_t>{7}
                                         : std::vector<int64_t>{3, 1, 4, 1, 5};
    const std::vector<float> want = program_logits(programs.at(component), *model, ids);
    const std::vector<float> got = program_logits(rewritten.at(component), *model, ids);
    ASSERT_EQ(got.size(), want.size());
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5f * scale) << fixture << " " << component << " logit " << i;
  }
}

TEST(PackedLinearWeights, UntiedModelPacksEveryLinear) {
  expect_packed_with_the_same_logits("models/llama", /*linears_left=*/0);
}

// Qwen3's lm_head reads the embedding table, which `embedding` reads too: it stays.
TEST(PackedLinearWeights, TiedLmHeadStays) {
  expect_packed_with_the_same_logits("models/qwen3", /*linears_left=*/1);
}

TEST(PackedLinearWeights, SmallWeightsTheBudgetAndTheSwitch) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  const ExportedProgram decode = generation_programs(*model).at("decode");
  {  // the fixture's weights are under the default threshold
    runtime::PackedLinearWeights panels;
    EXPECT_EQ(panels.apply(decode).graph, decode.graph);
    EXPECT_EQ(panels.packed(), 0);
  }
  {  // a memory budget of one weight's panels: the first linear alone is packed
    const Tensor& first = decode.state.at("model.layers.0.self_attn.q_proj.weight");
    const int64_t bytes =
        pack_linear_weight(first, std::max<int64_t>(packed_linear_width(), 1)).numel() * 4;
    runtime::PackedLinearWeights panels(0, bytes);
    const ExportedProgram p = panels.apply(decode);
    if (packed_linear_width() > 0) {
      EXPECT_EQ(panels.packed(), 1);
      EXPECT_EQ(count_nodes(p, "ingot::packed_linear"), 1);
      EXPECT_EQ(p.state.at("model.layers.0.self_attn.q_proj.weight").dim(), 3);
    }
  }
  {  // INGOT_PACKED_WEIGHTS=0: the options leave the pass out of the pipeline
    ::setenv("INGOT_PACKED_WEIGHTS", "0", 1);
    const runtime::RuntimeOptions options = runtime::RuntimeOptions::from_environment();
    ::unsetenv("INGOT_PACKED_WEIGHTS");
    EXPECT_FALSE(options.pass_enabled("packed_linear_weights"));
    runtime::PassPipeline pipeline(options);
    const ExportedProgram p = pipeline.run(decode, {"decode"});
    EXPECT_EQ(count_nodes(p, "ingot::packed_linear"), 0);
    EXPECT_EQ(pipeline.report().disabled, std::vector<std::string>{"packed_linear_weights"});
    EXPECT_EQ(pipeline.report().changes("decode", "packed_linear_weights"), 0);
  }
}

// A linear with a weight parameter and a bias parameter of `bias_shape`.
class BiasedLinear : public nn::Module {
 public:
  explicit BiasedLinear(const IntShape& bias_shape) : Module("BiasedLinear") {
    std::mt19937 rng(9);
    weight_ = register_parameter("weight", testing_random({32, 8}, rng));
    bias_ = register_parameter("bias", testing_random(bias_shape, rng));
  }
  Tensor forward(const Tensor& x) { return linear(x, *weight_, *bias_); }

 private:
  static Tensor testing_random(const IntShape& sizes, std::mt19937& rng) {
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(size_t(shape_numel(sizes)));
    for (float& f : v) f = u(rng);
    return Tensor::from_vector(v, sizes);
  }
  Tensor* weight_;
  Tensor* bias_;
};

// A 1-D bias rides along (y = bias + x W^T); a broadcasting [1, out] bias, which
// packed_linear does not take, leaves its linear and weight alone.
TEST(PackedLinearWeights, BiasOneDimensionalOnly) {
  if (packed_linear_width() == 0) GTEST_SKIP() << "the GEMM kernels here take no packed weights";
  const Tensor x = Tensor::from_vector<float>(std::vector<float>(3 * 8, 0.25f), {3, 8});
  {
    BiasedLinear m({32});
    const ExportedProgram ep = export_(m, std::tuple{x});
    runtime::PackedLinearWeights panels(0);
    const ExportedProgram p = panels.apply(ep);
    EXPECT_EQ(count_nodes(p, "ingot::packed_linear"), 1);
    runtime::ProgramModule packed(p), plain(ep);
    EXPECT_LE(max_abs_diff(packed(x).at(0), plain(x).at(0)), 1e-5);
  }
  {
    BiasedLinear m({1, 32});
    const ExportedProgram ep = export_(m, std::tuple{x});
    runtime::PackedLinearWeights panels(0);
    EXPECT_EQ(panels.apply(ep).graph, ep.graph);
    EXPECT_EQ(panels.packed(), 0);
  }
}

}  // namespace
}  // namespace ingot
