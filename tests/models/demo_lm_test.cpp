// The committed demo default model, assets/demo-lm (a Llama trained on Jane Austen by
// tools/reference/train_demo_lm.py), loads in ingot and behaves as in transformers:
// its tokenizer.json encodes and decodes like the `tokenizers` package, the eager forward
// of a prompt matches transformers' float32 logits within 1e-4, and greedy decoding with
// the KV cache gives transformers' generate() tokens. Fixtures: tests/fixtures/demo_lm/,
// written by the same script from the saved folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../ops/op_test_util.h"
#include "fixture_path.h"
#include "ingot/formats/npy.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"
#include "ingot/text/tokenizer.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using nlohmann::json;

// assets/ sits two levels above tests/fixtures/ in the repository.
std::string demo_dir() { return fixture_path("../../assets/demo-lm"); }

json expected() {
  std::ifstream f(fixture_path("demo_lm/expected.json"));
  EXPECT_TRUE(f.good()) << "tests/fixtures/demo_lm/expected.json";
  return json::parse(f);
}

TEST(DemoLm, FolderIsAnHfCheckpointWithinTheSizeBudget) {
  uintmax_t bytes = 0;
  for (const char* name : {"config.json", "model.safetensors", "generation_config.json",
                           "tokenizer.json", "tokenizer_config.json", "README.md"}) {
    const fs::path path = fs::path(demo_dir()) / name;
    ASSERT_TRUE(fs::exists(path)) << path;
  }
  for (const auto& e : fs::directory_iterator(demo_dir())) bytes += fs::file_size(e.path());
  EXPECT_LE(bytes, 25u * 1000 * 1000) << "the demo model must stay within 25 MB";
}

TEST(DemoLm, TokenizerMatchesTokenizersPackage) {
  json want = expected();
  text::Tokenizer tok = text::Tokenizer::from_folder(demo_dir());
  EXPECT_EQ(tok.vocab_size(), want["vocab_size"].get<size_t>());
  EXPECT_EQ(tok.token_to_id("<|endoftext|>"), want["eot_id"].get<int64_t>());
  ASSERT_FALSE(want["tokenizer_cases"].empty());
  for (const json& c : want["tokenizer_cases"]) {
    const std::string text = c["text"].get<std::string>();
    const auto ids = c["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(tok.encode(text, true), ids) << text;
    EXPECT_EQ(tok.decode(ids, false), c["decoded"].get<std::string>()) << text;
  }
}

TEST(DemoLm, ForwardMatchesTransformersFloat32) {
  json want = expected();
  text::Tokenizer tok = text::Tokenizer::from_folder(demo_dir());
  const auto ids = tok.encode(want["prompt"].get<std::string>(), true);
  ASSERT_EQ(ids, want["prompt_ids"].get<std::vector<int64_t>>());

  auto model = from_pretrained(demo_dir());
  EXPECT_EQ(model->architecture(), "LlamaForCausalLM");
  ModelInputs in;
  in.input_ids = Tensor::from_vector<int64_t>(ids, {1, int64_t(ids.size())});
  Tensor logits = model->forward(in).logits;  // [1, seq, vocab]
  Tensor reference = formats::load_npy(fixture_path("demo_lm/logits.npy"));
  ASSERT_EQ(logits.sizes(), reference.sizes());
  auto got = ingot::testing::values(logits), ref = ingot::testing::values(reference);
  double max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, std::abs(got[i] - ref[i]));
  EXPECT_LE(max_diff, 1e-4);
}

TEST(DemoLm, GreedyDecodeWithKVCacheMatchesTransformersGenerate) {
  json want = expected();
  const auto prompt = want["prompt_ids"].get<std::vector<int64_t>>();
  const auto greedy = want["greedy_ids"].get<std::vector<int64_t>>();
  auto model = from_pretrained(demo_dir());
  nn::KVCache cache;
  ModelInputs in;
  in.cache = &cache;
  in.input_ids = Tensor::from_vector<int64_t>(prompt, {1, int64_t(prompt.size())});
  std::vector<int64_t> out;
  for (size_t i = 0; i < greedy.size(); ++i) {
    Tensor logits = model->forward(in).logits;  // [1, s, vocab]
    const int64_t next = argmax(select(select(logits, 0, 0), 0, -1)).item<int64_t>();
    out.push_back(next);
    in.input_ids = Tensor::from_vector<int64_t>({next}, {1, 1});
  }
  EXPECT_EQ(out, greedy);
  text::Tokenizer tok = text::Tokenizer::from_folder(demo_dir());
  EXPECT_FALSE(tok.decode(out, true).empty());
}

}  // namespace
}  // namespace ingot::models
