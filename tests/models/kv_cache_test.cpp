// Incremental decoding with the eager KV cache gives the same logits as one full
// forward over the whole sequence, for every decoder architecture.
#include <gtest/gtest.h>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/models/model.h"
#include "ingot/models/npy.h"

namespace ingot::models {
namespace {

class KVCacheDecoding : public ::testing::TestWithParam<std::string> {};

TEST_P(KVCacheDecoding, PrefillThenStepsMatchFullForward) {
  const std::string dir = ingot::testing::fixture_path("models/" + GetParam());
  auto model = from_pretrained(dir);
  Tensor ids = slice(load_npy(dir + "/input_ids.npy"), 0, 0, 1);  // [1, 9], no padding
  const int64_t n = ids.size(1), prompt = 4;
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

INSTANTIATE_TEST_SUITE_P(Fixtures, KVCacheDecoding,
                         ::testing::Values("llama", "mistral_sliding_window", "qwen2_yarn_rope",
                                           "qwen3", "gpt2"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ingot::models
