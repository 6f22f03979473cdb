// generate() behaviour: errors (empty prompt, padding-only row, prompt longer than the
// static cache), stopping at max_cache_len, streaming, the forward hook and the
// arguments it sees, seeded sampling, and reusing a caller's cache.
#include "ingot/generation/generate.h"

#include <gtest/gtest.h>

#include "../models/fixture_path.h"
#include "../ops/op_test_util.h"
#include "ingot/formats/npy.h"

namespace ingot::generation {
namespace {

using ingot::testing::values;

class Generate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = models::from_pretrained(ingot::testing::fixture_path("models/mistral_sliding_window"));
    prompt_ = formats::load_npy(
        ingot::testing::fixture_path("generation/mistral_sliding_window/prompt.npy"));
    greedy_ = values(formats::load_npy(
        ingot::testing::fixture_path("generation/mistral_sliding_window/greedy.npy")));
  }
  static void TearDownTestSuite() { model_.reset(); }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  static inline std::shared_ptr<models::PretrainedModel> model_;
  static inline Tensor prompt_;               // [1, 7]
  static inline std::vector<double> greedy_;  // prompt + 40 greedy tokens
};

TEST_F(Generate, EmptyPromptIsAnError) {
  GenerationConfig config;
  std::string msg = error_of([&] { generate(*model_, Tensor::empty({1, 0}, DType::I64), config); });
  EXPECT_NE(msg.find("[generate] the prompt is empty"), std::string::npos) << msg;
  msg = error_of([&] {
    GenerateOptions options;
    options.attention_mask =
        Tensor::from_vector<int64_t>({1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, {2, 7});
    generate(*model_, cat({prompt_, prompt_}, 0), config, options);
  });
  EXPECT_NE(msg.find("row 1 of the prompt is only padding"), std::string::npos) << msg;
  config.max_new_tokens = 0;
  EXPECT_THROW(generate(*model_, prompt_, config), ValueError);
}

TEST_F(Generate, PromptLongerThanTheStaticCacheIsAnError) {
  GenerationConfig config;
  config.cache = CacheKind::Static;
  config.max_cache_len = 5;
  const std::string msg = error_of([&] { generate(*model_, prompt_, config); });
  EXPECT_NE(msg.find("the prompt has 7 tokens but the static cache holds max_cache_len 5"),
            std::string::npos)
      << msg;
}

// A cache of 10 slots holds the 7 prompt tokens and 3 generated ones: the 4th new token
// is the last (it is never fed back), then generation stops with a message.
TEST_F(Generate, ReachingMaxCacheLenStops) {
  GenerationConfig config;
  config.cache = CacheKind::Static;
  config.max_cache_len = 10;
  config.max_new_tokens = 20;
  GenerationResult r = generate(*model_, prompt_, config);
  EXPECT_EQ(r.stop_reason, StopReason::CacheFull);
  EXPECT_EQ(r.num_new_tokens, 4);
  EXPECT_NE(r.message.find("the static cache is full: max_cache_len 10"), std::string::npos)
      << r.message;
  EXPECT_EQ(values(r.sequences), std::vector<double>(greedy_.begin(), greedy_.begin() + 11));
  // The same cache driven past its end by hand is an error, never a write.
  auto cache = make_cache(*model_, CacheKind::Static, 1, 10);
  models::ModelInputs in;
  in.cache = cache.get();
  in.input_ids = prompt_;
  model_->forward(in);
  in.input_ids = slice(prompt_, 1, 0, 4);
  const std::string msg = error_of([&] { model_->forward(in); });
  EXPECT_NE(msg.find("cache full: 7 tokens are cached and 4 more do not fit max_cache_len 10"),
            std::string::npos)
      << msg;
}

TEST_F(Generate, StreamsEveryTokenAndStopsOnRequest) {
  GenerationConfig config;
  config.max_new_tokens = 10;
  std::vector<int64_t> streamed;
  GenerateOptions options;
  options.on_token = [&](int64_t row, int64_t token) {
    EXPECT_EQ(row, 0);
    streamed.push_back(token);
    return streamed.size() < 3;
  };
  GenerationResult r = generate(*model_, prompt_, config, options);
  EXPECT_EQ(r.stop_reason, StopReason::Callback);
  ASSERT_EQ(streamed.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(double(streamed[i]), greedy_[7 + i]);
  EXPECT_EQ(r.num_new_tokens, 3);
  EXPECT_GT(r.prefill_seconds, 0);
  EXPECT_EQ(r.prefill_tokens, 7);
  EXPECT_EQ(r.decode_tokens, 2);
}

// The hook sees the real forward arguments: the prompt with a mask over all cache slots,
// then one token per step at increasing positions, always with the same cache.
TEST_F(Generate, ForwardHookSeesTheRealArguments) {
  struct Call {
    IntShape ids, mask;
    std::vector<double> positions;
    int64_t cached;
    nn::Cache* cache;
  };
  std::vector<Call> calls;
  GenerateOptions options;
  options.forward = [&](const models::ModelInputs& in) {
    calls.push_back({in.input_ids.sizes(), in.attention_mask.sizes(), values(in.position_ids),
                     in.cache->seq_length(), in.cache});
    return model_->forward(in);
  };
  GenerationConfig config;
  config.max_new_tokens = 3;
  config.cache = CacheKind::Static;
  config.max_cache_len = 16;
  GenerationResult r = generate(*model_, prompt_, config, options);
  EXPECT_EQ(values(r.sequences), std::vector<double>(greedy_.begin(), greedy_.begin() + 10));
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].ids, (IntShape{1, 7}));
  EXPECT_EQ(calls[0].mask, (IntShape{1, 16}));
  EXPECT_EQ(calls[0].positions, (std::vector<double>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(calls[0].cached, 0);
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(calls[i].ids, (IntShape{1, 1}));
    EXPECT_EQ(calls[i].mask, (IntShape{1, 16}));
    EXPECT_EQ(calls[i].positions, (std::vector<double>{double(6 + i)}));
    EXPECT_EQ(calls[i].cached, int64_t(6 + i));
    EXPECT_EQ(calls[i].cache, calls[0].cache);
  }
}

TEST_F(Generate, SeededSamplingIsDeterministic) {
  GenerationConfig config;
  config.max_new_tokens = 24;
  config.do_sample = true;
  config.temperature = 1.5;  // flat enough that different seeds differ
  config.top_k = 0;
  config.seed = 11;
  Tensor a = generate(*model_, prompt_, config).sequences;
  Tensor b = generate(*model_, prompt_, config).sequences;
  EXPECT_EQ(values(a), values(b));
  config.cache = CacheKind::Static;  // the cache does not change the draws
  EXPECT_EQ(values(generate(*model_, prompt_, config).sequences), values(a));
  config.seed = 12;
  EXPECT_NE(values(generate(*model_, prompt_, config).sequences), values(a));
  // top_k = 1 leaves one candidate: sampling is greedy.
  config.top_k = 1;
  EXPECT_EQ(values(generate(*model_, prompt_, config).sequences),
            std::vector<double>(greedy_.begin(), greedy_.begin() + 31));
  config.temperature = 0;
  EXPECT_THROW(generate(*model_, prompt_, config), ValueError);
}

TEST_F(Generate, ReusesACallersCacheAfterReset) {
  auto cache = make_cache(*model_, CacheKind::Static, 1, 12);
  const void* storage = cache->named_tensors()[0].second.raw_data();
  GenerateOptions options;
  options.cache = cache.get();
  GenerationConfig config;
  config.max_new_tokens = 5;
  Tensor first = generate(*model_, prompt_, config, options).sequences;
  EXPECT_THROW(generate(*model_, prompt_, config, options), ValueError);  // not empty
  cache->reset();
  Tensor second = generate(*model_, prompt_, config, options).sequences;
  EXPECT_EQ(values(first), values(second));
  EXPECT_EQ(values(first), std::vector<double>(greedy_.begin(), greedy_.begin() + 12));
  EXPECT_EQ(cache->named_tensors()[0].second.raw_data(), storage);
}

}  // namespace
}  // namespace ingot::generation
