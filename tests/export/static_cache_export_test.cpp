// A decoder exported with a StaticCache input: one graph with a symbolic number of new
// tokens serves the prompt and single-token steps; the cache is written in place by the
// runtime (no copy) and the logits equal eager decoding with its own StaticCache.
#include <gtest/gtest.h>

#include "../models/fixture_path.h"
#include "export_test_util.h"
#include "ingot/export/export.h"
#include "ingot/export/static_cache_pytree.h"
#include "ingot/models/model.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot {
namespace {

class StaticCacheExport : public ::testing::TestWithParam<const char*> {};

TEST_P(StaticCacheExport, MultiTokenDecodeGraphMatchesEagerAndWritesTheCacheInPlace) {
  auto model = models::from_pretrained(testing::fixture_path(std::string("models/") + GetParam()));
  const nn::CacheSpec spec = *model->cache_spec();
  const int64_t max_len = 24;
  auto step = [&](const Tensor& input_ids, nn::StaticCache cache) {
    models::ModelInputs in;
    in.input_ids = input_ids;
    in.cache = &cache;
    return model->forward(in).logits;
  };
  ExportOptions o;
  o.input_names = {"input_ids", "cache"};
  o.dynamic_shapes =
      DynamicShapes::tuple({DynamicShapes::tensor({{1, Dim("tokens", 1, max_len)}}), {}});
  nn::StaticCache example_cache(spec, 1, max_len);
  ExportedProgram ep =
      export_(nullptr, step, std::tuple{zeros({1, 3}, DType::I64), example_cache}, o);
  const std::string p = ep.print();
  EXPECT_TRUE(testing::contains(p, "USER_INPUT_MUTATION target='cache.key_cache.0'")) << p;
  EXPECT_TRUE(testing::contains(p, "USER_INPUT_MUTATION target='cache.cache_position'")) << p;
  EXPECT_TRUE(testing::contains(p, "assert")) << p;  // the room check

  auto mod = ingot::runtime::ProgramModule(ep);
  // Every layer's key and value write, and the position update, run in place.
  EXPECT_EQ(mod.num_inplace_writes(), size_t(2 * spec.num_layers + 1));
  nn::StaticCache exported_cache(spec, 1, max_len), eager_cache(spec, 1, max_len);
  const void* key0 = exported_cache.keys(0).raw_data();
  // Prompt of 5 tokens, then 4 single tokens, then a block of 3.
  std::vector<int64_t> lengths{5, 1, 1, 1, 1, 3};
  uint32_t seed = 1;
  for (int64_t q : lengths) {
    Tensor ids = to(abs(mul(testing::rand_tensor({1, q}, seed++), Scalar(30))), DType::I64);
    Tensor got = mod(ids, exported_cache).at(0);
    models::ModelInputs in;
    in.input_ids = ids;
    in.cache = &eager_cache;
    testing::expect_near_tensors(got, model->forward(in).logits, 1e-5);
  }
  EXPECT_EQ(exported_cache.seq_length(), 12);
  EXPECT_EQ(exported_cache.keys(0).raw_data(), key0);
  testing::expect_near_tensors(exported_cache.keys(0), eager_cache.keys(0), 1e-6);
  // A step that would overflow the cache is refused before anything is written.
  Tensor too_many = zeros({1, 13}, DType::I64);
  EXPECT_THROW(mod(too_many, exported_cache), ValueError);
  EXPECT_EQ(exported_cache.seq_length(), 12);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StaticCacheExport,
                         ::testing::Values("llama", "mistral_sliding_window", "qwen2_linear_rope",
                                           "qwen3", "gpt2", "gemma2", "gemma3",
                                           "qwen2_sliding_window", "phi3_longrope", "olmo2",
                                           "granite", "gpt_neox", "stablelm", "smollm3"));

}  // namespace
}  // namespace ingot
