// A model folder's generation_config.json applied to generate()'s settings: what the file
// sets wins over the defaults, the rest stays (the demo model and the hand-written
// folders of tests/fixtures/generation_config).
#include "ingot/generation/model_defaults.h"

#include <gtest/gtest.h>

#include "../models/fixture_path.h"

namespace ingot::generation {
namespace {

using ingot::testing::fixture_path;

TEST(ModelDefaults, DemoModel) {
  auto file = models::GenerationConfig::from_folder(fixture_path("../../assets/demo-lm"));
  GenerationConfig c = with_model_defaults(file, 5);
  EXPECT_TRUE(c.do_sample);
  EXPECT_EQ(c.temperature, 0.8);
  EXPECT_EQ(c.top_k, 40);
  EXPECT_EQ(c.top_p, 1.0);  // unset: the default stays
  EXPECT_EQ(c.max_new_tokens, 64);
  EXPECT_EQ(c.stop_token_ids, std::vector<int64_t>{0});
  EXPECT_EQ(c.pad_token_id, 0);
  c.validate();
}

TEST(ModelDefaults, EosListPenaltyAndLimits) {
  auto qwen =
      models::GenerationConfig::from_folder(fixture_path("generation_config/qwen_instruct"));
  GenerationConfig base;
  base.max_new_tokens = 9;
  GenerationConfig c = with_model_defaults(qwen, 5, base);
  EXPECT_EQ(c.stop_token_ids, (std::vector<int64_t>{151645, 151643}));
  EXPECT_EQ(c.repetition_penalty, 1.05);
  EXPECT_EQ(c.top_k, 20);
  EXPECT_EQ(c.max_new_tokens, 9);  // the file sets no limit

  auto limits =
      models::GenerationConfig::from_folder(fixture_path("generation_config/limits_min_p"));
  SamplingParams s = sampling_with_model_defaults(limits);
  EXPECT_EQ(s.min_p, 0.05);
  EXPECT_EQ(s.top_k, 0);
  EXPECT_EQ(s.temperature, 1.0);  // null in the file: unset
  EXPECT_EQ(with_model_defaults(limits, 5).max_new_tokens, 256);
  limits.max_new_tokens.reset();  // max_length 4096 then counts the prompt
  EXPECT_EQ(with_model_defaults(limits, 96).max_new_tokens, 4000);
  EXPECT_EQ(with_model_defaults(limits, 5000).max_new_tokens, 1);
}

}  // namespace
}  // namespace ingot::generation
