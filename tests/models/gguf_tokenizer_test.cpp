// The tokenizer of a GGUF's metadata (gguf_tokenizer.h) encodes and decodes as transformers'
// GGUF tokenizer does (AutoTokenizer.from_pretrained(dir, gguf_file=...)), on the corpus
// tools/reference/make_gguf_tokenizer_fixtures.py recorded: byte-level BPE with the GPT-2
// regex and with the Qwen2 split, a user-defined added token, add_bos_token, and a
// SentencePiece vocabulary whose merges are derived from its scores.
#include "ingot/models/gguf_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../error_of.h"
#include "fixture_path.h"
#include "ingot/formats/gguf.h"
#include "ingot/text/tokenizer.h"

namespace ingot::models {
namespace {

using ingot::testing::fixture_path;
using nlohmann::json;

json expected() {
  std::ifstream f(fixture_path("gguf/expected_tokenizers.json"));
  return json::parse(f);
}

class GgufTokenizer : public ::testing::TestWithParam<std::string> {};

TEST_P(GgufTokenizer, EqualsTransformersGgufTokenizer) {
  const json e = expected();
  const json& want = e[GetParam()];
  formats::GgufFile f = formats::GgufFile::open(fixture_path("gguf/" + GetParam() + ".gguf"));
  text::Tokenizer tok = text::Tokenizer::from_json_text(gguf_tokenizer_json(f), f.path());
  EXPECT_EQ(tok.vocab_size(), want["vocab_size"].get<size_t>());
  const auto& strings = e["strings"];
  int failures = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    const std::string s = strings[i].get<std::string>();
    const auto with = tok.encode(s, true);
    const auto without = tok.encode(s, false);
    const bool ok = with == want["with_special"][i].get<std::vector<int64_t>>() &&
                    without == want["without_special"][i].get<std::vector<int64_t>>() &&
                    tok.decode(with) == want["decoded"][i].get<std::string>();
    if (!ok && ++failures <= 3) ADD_FAILURE() << GetParam() << " string " << i << ": '" << s << "'";
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, GgufTokenizer,
                         ::testing::Values("tok_gpt2", "tok_qwen2", "tok_llama", "tok_phi3",
                                           "tok_gemma"));

TEST(GgufTokenizerConfig, SpecialTokensAddBosAndTheChatTemplate) {
  formats::GgufFile q = formats::GgufFile::open(fixture_path("gguf/tok_qwen2.gguf"));
  const json c = json::parse(gguf_tokenizer_config_json(q));
  EXPECT_EQ(c["eos_token"], "<|endoftext|>");
  EXPECT_EQ(c["add_bos_token"], false);
  EXPECT_NE(c["chat_template"].get<std::string>().find("<|im_start|>"), std::string::npos);
  formats::GgufFile l = formats::GgufFile::open(fixture_path("gguf/tok_llama.gguf"));
  const json lc = json::parse(gguf_tokenizer_config_json(l));
  EXPECT_EQ(lc["bos_token"], "<s>");
  EXPECT_EQ(lc["unk_token"], "<unk>");
  EXPECT_EQ(lc["add_bos_token"], true);
  EXPECT_FALSE(lc.contains("chat_template"));
}

}  // namespace
}  // namespace ingot::models
