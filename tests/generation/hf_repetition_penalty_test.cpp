// Eager generate() with a repetition penalty against transformers' greedy generate with
// repetition_penalty = 1.3 (fixtures by tools/reference/make_generation_fixtures.py,
// penalty_fixtures): the same tokens for 40 new tokens, and for a left-padded batch,
// whose padding transformers leaves out of the penalty. The per-step scores are the
// penalised logits on both sides. Checkpoints whose penalised greedy run comes within
// 1e-4 of a tie have no fixture (the script skips them).
#include <gtest/gtest.h>

#include <filesystem>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/formats/npy.h"
#include "ingot/generation/generate.h"

namespace ingot::generation {
namespace {

using ingot::testing::values;

class HfRepetitionPenalty : public ::testing::TestWithParam<std::string> {
 protected:
  std::string path(const std::string& name) const {
    return ingot::testing::fixture_path("generation/" + GetParam() + "/" + name + ".npy");
  }
  Tensor fixture(const std::string& name) const { return formats::load_npy(path(name)); }
};

TEST_P(HfRepetitionPenalty, GreedyMatchesTransformers) {
  if (!std::filesystem::exists(path("penalty"))) {
    GTEST_SKIP() << GetParam() << ": no penalty fixture (a greedy choice near a tie)";
  }
  auto model = models::from_pretrained(ingot::testing::fixture_path("models/" + GetParam()));
  GenerationConfig config;
  config.repetition_penalty = 1.3;
  config.output_scores = true;
  config.max_new_tokens = 40;
  GenerationResult r = generate(*model, fixture("prompt"), config);
  EXPECT_EQ(values(r.sequences), values(fixture("penalty")));
  ingot::testing::expect_close(stack(r.scores, 1), values(fixture("penalty_scores")), 1e-5, 1e-5,
                               "penalised logits vs transformers");
  // The penalised scores are not the plain ones (the tokens may still be the same).
  EXPECT_NE(values(stack(r.scores, 1)), values(fixture("greedy_scores")));

  GenerateOptions options;
  options.attention_mask = fixture("padded_mask");
  config.max_new_tokens = 32;
  config.pad_token_id = 0;
  for (CacheKind kind : {CacheKind::Dynamic, CacheKind::Static}) {
    config.cache = kind;
    GenerationResult padded = generate(*model, fixture("padded_prompt"), config, options);
    EXPECT_EQ(values(padded.sequences), values(fixture("padded_penalty")))
        << (kind == CacheKind::Static ? "static" : "dynamic") << " cache";
    ingot::testing::expect_close(stack(padded.scores, 1), values(fixture("padded_penalty_scores")),
                                 1e-5, 1e-5, "padded penalised logits vs transformers");
  }
}

INSTANTIATE_TEST_SUITE_P(Decoders, HfRepetitionPenalty,
                         ::testing::Values("llama", "llama_llama3_rope_tied_bf16",
                                           "mistral_sliding_window", "qwen2_linear_rope",
                                           "qwen2_yarn_rope", "qwen3", "qwen3_dynamic_rope_f16",
                                           "gpt2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::generation
