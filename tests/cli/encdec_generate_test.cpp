// `ingot export FOLDER --task generation -o DIR` and `ingot generate` for T5 (issue 18,
// tools/reference/make_encdec_fixtures.py): greedy ids == transformers' generate for all
// 20 new tokens from the prompt text (tokenized with </s>, given to the encoder) and from
// --input input_ids=FILE.npy, for the directory and the model folder; errors naming the
// input. The Unigram case runs T5's own tokenizer model (tokenizer_unigram_test.cpp) on
// the same checkpoint.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;

std::string t5(const std::string& model, const std::string& f = "") {
  return testing::fixture_path("encdec/" + model + "/" + f);
}
std::vector<int64_t> ints(const std::string& file) {
  Tensor t = formats::load_npy(file);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}
std::string text_of(const std::string& file) {
  std::ifstream f(file);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

class T5Cli : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("ingot_t5_cli_" + GetParam() + "_" + std::to_string(::getpid())))
               .string();
    ASSERT_EQ(call(run_export,
                   {t5(GetParam()), "--task", "generation", "--max-cache-len", "32", "-o", dir_}),
              0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static nlohmann::json generate(std::vector<std::string> args) {
    args.insert(args.end(), {"--max-new-tokens", "20", "--json"});
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    return nlohmann::json::parse(out);
  }
  std::string dir_;
};

TEST_P(T5Cli, ExportWritesTheEncoderDecoderPipeline) {
  std::ifstream f(fs::path(dir_) / "manifest.json");
  const nlohmann::json m = nlohmann::json::parse(f);
  EXPECT_EQ(m["architecture"], "T5ForConditionalGeneration");
  EXPECT_EQ(m["pipeline"]["kind"], "encoder-decoder");
  EXPECT_EQ(m["pipeline"]["decoder_prompt"], nlohmann::json::array({0}));
  for (const char* c : {"encoder", "cross_kv", "decode"}) {
    ASSERT_TRUE(m["components"].contains(c)) << c;
    EXPECT_TRUE(fs::exists(fs::path(dir_) / m["components"][c].get<std::string>())) << c;
  }
}

TEST_P(T5Cli, PromptAndInputGiveTransformersGreedyIds) {
  const std::vector<int64_t> expected = ints(t5(GetParam(), "greedy.npy"));
  ASSERT_EQ(expected.size(), 20u);
  const std::string prompt = text_of(t5(GetParam(), "prompt.txt"));
  for (const std::string& source : {dir_, t5(GetParam())}) {
    nlohmann::json by_text = generate({source, "--prompt", prompt});
    EXPECT_EQ(by_text["prompt_ids"].get<std::vector<int64_t>>(),
              ints(t5(GetParam(), "input_ids.npy")))
        << source;
    EXPECT_EQ(by_text["decoder_prompt_ids"], nlohmann::json::array({0}));
    EXPECT_EQ(by_text["generated_ids"].get<std::vector<int64_t>>(), expected) << source;
    nlohmann::json by_input =
        generate({source, "--input", "input_ids=" + t5(GetParam(), "input_ids.npy")});
    EXPECT_EQ(by_input["generated_ids"].get<std::vector<int64_t>>(), expected) << source;
  }
}

TEST_P(T5Cli, BadInputsNameTheInput) {
  try {
    call(run_generate, {dir_, "--input", "pixel_values=" + t5(GetParam(), "input_ids.npy")});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("pixel_values"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input_ids"), std::string::npos) << e.what();
  }
  const fs::path mask = fs::path(dir_) / "mask.npy";
  formats::save_npy(mask.string(), Tensor::from_vector(std::vector<int64_t>{1, 1}, {1, 2}));
  try {
    call(run_generate, {dir_, "--input", "attention_mask=" + mask.string()});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder input is missing"), std::string::npos)
        << e.what();
  }
  try {
    call(run_generate, {dir_, "--prompt", "the cat", "--image", t5(GetParam(), "prompt.txt")});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("--image"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, T5Cli, ::testing::Values("t5", "t5_gated"));

// The T5 fixture with T5's own tokenizer model: a copy of the folder whose tokenizer.json
// is the Unigram one of tests/fixtures/tokenizers/t5_encdec (same ids as the fixture's
// WordLevel vocabulary, made with the `tokenizers` package). --prompt goes through the
// Unigram model on the folder and on the exported directory; the ids and the greedy text
// are those of transformers / tokenizers.
TEST(T5CliUnigram, PromptThroughUnigramTokenizer) {
  const fs::path root =
      fs::temp_directory_path() / ("ingot_t5_unigram_" + std::to_string(::getpid()));
  const fs::path folder = root / "t5";
  const fs::path dir = root / "gen";
  fs::create_directories(root);
  fs::copy(t5("t5"), folder, fs::copy_options::recursive);
  fs::copy_file(testing::fixture_path("tokenizers/t5_encdec/tokenizer.json"),
                folder / "tokenizer.json", fs::copy_options::overwrite_existing);
  const nlohmann::json expected =
      nlohmann::json::parse(text_of(testing::fixture_path("tokenizers/t5_encdec/expected.json")));
  ASSERT_EQ(call(run_export, {folder.string(), "--task", "generation", "--max-cache-len", "32",
                              "-o", dir.string()}),
            0);
  const std::string prompt = text_of(t5("t5", "prompt.txt"));
  ASSERT_EQ(expected["prompt"], prompt);
  for (const fs::path& source : {folder, dir}) {
    auto [rc, out] = captured(
        run_generate, {source.string(), "--prompt", prompt, "--max-new-tokens", "20", "--json"});
    ASSERT_EQ(rc, 0) << source;
    const nlohmann::json result = nlohmann::json::parse(out);
    EXPECT_EQ(result["prompt_ids"].get<std::vector<int64_t>>(), ints(t5("t5", "input_ids.npy")))
        << source;
    EXPECT_EQ(result["generated_ids"].get<std::vector<int64_t>>(), ints(t5("t5", "greedy.npy")))
        << source;
    EXPECT_EQ(result["text"], expected["greedy_text"]) << source;
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace ingot::cli
