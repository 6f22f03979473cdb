// Eager generate() against transformers' generate on every tiny decoder checkpoint
// (fixtures by tools/reference/make_generation_fixtures.py): greedy token ids identical
// for 40 new tokens with the growing and the static cache, a stop token, and a
// left-padded batch. Per-step logits within 1e-5 of transformers' (measured <= 2.4e-7;
// static == dynamic cache exactly): several checkpoints repeat one token, so the logits
// are what shows a cache bug there.
#include <gtest/gtest.h>

#include "../decoder_fixtures.h"
#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/formats/npy.h"
#include "ingot/generation/generate.h"

namespace ingot::generation {
namespace {

using ingot::testing::values;

class HfGenerate : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    model_ = models::from_pretrained(ingot::testing::fixture_path("models/" + GetParam()));
  }
  Tensor fixture(const std::string& name) const {
    return formats::load_npy(
        ingot::testing::fixture_path("generation/" + GetParam() + "/" + name + ".npy"));
  }
  // [batch, steps, vocab] from per-step [batch, vocab] scores.
  static Tensor stacked(const std::vector<Tensor>& scores) { return stack(scores, 1); }

  std::shared_ptr<models::PretrainedModel> model_;
};

TEST_P(HfGenerate, GreedyWithBothCaches) {
  Tensor prompt = fixture("prompt");
  Tensor expected = fixture("greedy");  // [1, 7 + 40]
  GenerationConfig config;
  config.max_new_tokens = expected.size(1) - prompt.size(1);
  config.output_scores = true;
  GenerationResult dynamic = generate(*model_, prompt, config);
  EXPECT_EQ(values(dynamic.sequences), values(expected)) << "dynamic cache";
  EXPECT_EQ(dynamic.stop_reason, StopReason::MaxNewTokens);
  ingot::testing::expect_close(stacked(dynamic.scores), values(fixture("greedy_scores")), 1e-5,
                               1e-5, "greedy logits vs transformers");

  config.cache = CacheKind::Static;  // max_cache_len = 47, as transformers' static cache
  GenerationResult fixed = generate(*model_, prompt, config);
  EXPECT_EQ(values(fixed.sequences), values(fixture("greedy_static"))) << "static cache";
  EXPECT_EQ(fixed.stop_reason, StopReason::MaxNewTokens);
  ingot::testing::expect_close(stacked(fixed.scores), values(stacked(dynamic.scores)), 1e-6, 1e-6,
                               "static vs dynamic cache logits");
}

TEST_P(HfGenerate, StopToken) {
  Tensor expected = fixture("stop");
  GenerationConfig config;
  config.max_new_tokens = 40;
  config.stop_token_ids = {int64_t(values(fixture("stop_token"))[0])};
  for (CacheKind kind : {CacheKind::Dynamic, CacheKind::Static}) {
    config.cache = kind;
    GenerationResult r = generate(*model_, fixture("prompt"), config);
    EXPECT_EQ(values(r.sequences), values(expected));
    EXPECT_EQ(r.stop_reason, StopReason::StopToken);
    EXPECT_EQ(r.num_new_tokens, expected.size(1) - 7);
  }
}

TEST_P(HfGenerate, LeftPaddedBatch) {
  Tensor prompt = fixture("padded_prompt");  // [2, 7], row 1 starts with 3 padding tokens
  GenerateOptions options;
  options.attention_mask = fixture("padded_mask");
  GenerationConfig config;
  config.max_new_tokens = 32;
  config.pad_token_id = 0;
  config.output_scores = true;
  GenerationResult dynamic = generate(*model_, prompt, config, options);
  EXPECT_EQ(values(dynamic.sequences), values(fixture("padded_greedy"))) << "dynamic cache";
  ingot::testing::expect_close(stacked(dynamic.scores), values(fixture("padded_greedy_scores")),
                               1e-5, 1e-5, "padded greedy logits vs transformers");
  config.cache = CacheKind::Static;
  GenerationResult fixed = generate(*model_, prompt, config, options);
  EXPECT_EQ(values(fixed.sequences), values(fixture("padded_greedy_static"))) << "static cache";
}

INSTANTIATE_TEST_SUITE_P(Decoders, HfGenerate,
                         ::testing::ValuesIn(ingot::testing::decoder_fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::generation
