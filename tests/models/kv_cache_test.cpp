// Incremental decoding with the growing KV cache and with the static cache gives the same
// logits as one full forward over the whole sequence, for every decoder architecture.
#include <gtest/gtest.h>

#include "../decoder_fixtures.h"
#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/models/model.h"

namespace ingot::models {
namespace {

// The first forward covers 5 tokens: past phi3_longrope's original_max_position_embeddings
// (4), so every forward uses the long factors, as the full forward does. (LongRoPE picks
// its factors per forward; a cached decode that crosses the limit differs from a full
// forward in transformers too, which re-runs the prompt there.)
constexpr int64_t kPrompt = 5;

class KVCacheDecoding : public ::testing::TestWithParam<std::string> {};

TEST_P(KVCacheDecoding, PrefillThenStepsMatchFullForward) {
  const std::string dir = ingot::testing::fixture_path("models/" + GetParam());
  auto model = from_pretrained(dir);
  Tensor ids = slice(formats::load_npy(dir + "/input_ids.npy"), 0, 0, 1);  // [1, 9], no padding
  const int64_t n = ids.size(1), prompt = kPrompt;
  ModelInputs full;
  full.input_ids = ids;
  Tensor expected = model->forward(full).logits;  // [1, n, vocab]

  nn::KVCache cache;
  ModelInputs step;
  step.cache = &cache;
  step.input_ids = slice(ids, 1, 0, prompt);
  std::vector<Tensor> pieces{model->forward(step).logits};
  for (int64_t t = prompt; t < n; ++t) {
    step.input_ids = slice(ids, 1, t, t + 1);
    pieces.push_back(model->forward(step).logits);
  }
  EXPECT_EQ(cache.seq_length(), n);
  ingot::testing::expect_close(cat(pieces, 1), ingot::testing::values(expected), 1e-5, 1e-5,
                               GetParam());
}

// The static cache serves any number of new tokens per forward (what one multi-token
// decode graph does): a prompt, a block of 3, then single tokens — each forward attends
// over all max_cache_len slots with a [1, max_cache_len] attention mask.
TEST_P(KVCacheDecoding, StaticCacheBlocksMatchFullForward) {
  const std::string dir = ingot::testing::fixture_path("models/" + GetParam());
  auto model = from_pretrained(dir);
  Tensor ids = slice(formats::load_npy(dir + "/input_ids.npy"), 0, 0, 1);  // [1, 9], no padding
  const int64_t n = ids.size(1), max_len = 12;
  ModelInputs full;
  full.input_ids = ids;
  Tensor expected = model->forward(full).logits;  // [1, n, vocab]

  nn::StaticCache cache(*model->cache_spec(), 1, max_len);
  ModelInputs step;
  step.cache = &cache;
  std::vector<Tensor> pieces;
  const std::vector<std::pair<int64_t, int64_t>> blocks{{0, kPrompt}, {kPrompt, 8}, {8, 9}};
  for (auto [begin, end] : blocks) {
    std::vector<int64_t> mask(size_t(max_len), 0);
    std::fill(mask.begin(), mask.begin() + end, 1);  // tokens so far, incl. this block
    step.input_ids = slice(ids, 1, begin, end);
    step.attention_mask = Tensor::from_vector<int64_t>(mask, {1, max_len});
    pieces.push_back(model->forward(step).logits);
  }
  EXPECT_EQ(cache.seq_length(), n);
  ingot::testing::expect_close(cat(pieces, 1), ingot::testing::values(expected), 1e-5, 1e-5,
                               GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, KVCacheDecoding,
                         ::testing::ValuesIn(ingot::testing::decoder_fixtures()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::models
