// The Unigram model and the Precompiled normalizer (T5's tokenizer) beyond the corpus
// conformance of tokenizer_test.cpp: the fixtures' extra strings (whole-cluster charsmap
// lookups, unknown runs, byte fallback, sentinels), the T5 generation fixture's prompt,
// grapheme clusters, and errors that name the field. Expected ids come from the Hugging
// Face `tokenizers` package (tools/reference/make_tokenizer_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer.h"
#include "ingot/text/tokenizer/grapheme.h"
#include "models/fixture_path.h"

namespace ingot::text {
namespace {

using ingot::testing::fixture_path;
using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  return json::parse(f);
}

class UnigramExtra : public ::testing::TestWithParam<std::string> {};

TEST_P(UnigramExtra, EncodesAndDecodesLikeTokenizers) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/" + GetParam()));
  json expected = read_json(fixture_path("tokenizers/" + GetParam() + "/expected.json"));
  ASSERT_GE(expected["extra"].size(), 10u);
  for (const json& c : expected["extra"]) {
    const std::string text = c["text"].get<std::string>();
    EXPECT_EQ(tok.encode(text), c["ids"].get<std::vector<int64_t>>()) << json(text).dump();
    EXPECT_EQ(tok.decode(c["ids"].get<std::vector<int64_t>>()), c["decoded"].get<std::string>())
        << json(text).dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, UnigramExtra, ::testing::Values("t5", "unigram_bf"),
                         [](const auto& info) { return info.param; });

// Text of the T5 fixture's WordLevel vocabulary re-tokenized by a Unigram model with the
// same ids: the ids of the generation fixture's prompt.
TEST(Unigram, T5GenerationPrompt) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/t5_encdec"));
  json expected = read_json(fixture_path("tokenizers/t5_encdec/expected.json"));
  auto ids = tok.encode(expected["prompt"].get<std::string>());
  EXPECT_EQ(ids, expected["prompt_ids"].get<std::vector<int64_t>>());
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), *tok.token_to_id("</s>"));
  EXPECT_EQ(tok.decode(ids, true), expected["prompt"].get<std::string>());
}

// Round trip: for text that the T5 charsmap leaves alone and the vocabulary covers, decode
// gives back the text with runs of whitespace collapsed (WhitespaceSplit + Metaspace).
TEST(Unigram, DecodeRoundTrip) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/t5"));
  for (const std::string text :
       {"The quick brown fox jumps over the lazy dog.", "a", "Hello, world! 123"}) {
    EXPECT_EQ(tok.decode(tok.encode(text), true), text);
  }
  EXPECT_EQ(tok.decode(tok.encode("  spaced \t out\n\n"), true), "spaced out");
  EXPECT_EQ(tok.encode(""), std::vector<int64_t>{1});  // just </s>
  EXPECT_TRUE(tok.encode("", false).empty());
}

TEST(Grapheme, ClusterBoundaries) {
  auto clusters = [](std::string_view text) {
    std::vector<std::string> out;
    for (size_t pos = 0; pos < text.size();) {
      size_t end = tokenizer::grapheme_end(text, pos);
      out.emplace_back(text.substr(pos, end - pos));
      pos = end;
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(clusters("ab"), (V{"a", "b"}));
  EXPECT_EQ(clusters("\r\n\n\r"), (V{"\r\n", "\n", "\r"}));                              // GB3-5
  EXPECT_EQ(clusters("e\u0301\u0302x"), (V{"e\u0301\u0302", "x"}));                      // GB9
  EXPECT_EQ(clusters("\u1100\u1161\u11a8\u1100"), (V{"\u1100\u1161\u11a8", "\u1100"}));  // GB6-8
  EXPECT_EQ(clusters("\U0001F468\u200d\U0001F469\u200d\U0001F467!"),
            (V{"\U0001F468\u200d\U0001F469\u200d\U0001F467", "!"}));  // GB11
  EXPECT_EQ(clusters("a\u200d\U0001F469"), (V{"a\u200d", "\U0001F469"}));
  EXPECT_EQ(clusters("\U0001F1E9\U0001F1EA\U0001F1EB\U0001F1F7\U0001F1FA"),
            (V{"\U0001F1E9\U0001F1EA", "\U0001F1EB\U0001F1F7", "\U0001F1FA"}));      // GB12-13
  EXPECT_EQ(clusters("\u0915\u094d\u0937\u093f"), (V{"\u0915\u094d\u0937\u093f"}));  // GB9a, 9c
  EXPECT_EQ(clusters("\u0600a"), (V{"\u0600a"}));                                    // GB9b
}

std::string load_error(const std::string& text) {
  try {
    Tokenizer::from_json_text(text, "unigram.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Unigram, MalformedModelsNameTheField) {
  EXPECT_NE(load_error(R"({"model": {"type": "Unigram", "vocab": []}})").find("model.vocab"),
            std::string::npos);
  std::string msg =
      load_error(R"({"model": {"type": "Unigram", "vocab": [["a", -1.0], ["b"]], "unk_id": 0}})");
  EXPECT_NE(msg.find("model.vocab[1]"), std::string::npos) << msg;
  msg = load_error(R"({"model": {"type": "Unigram", "vocab": [["a", "x"]]}})");
  EXPECT_NE(msg.find("model.vocab[0]"), std::string::npos) << msg;
  msg = load_error(R"({"model": {"type": "Unigram", "vocab": [["a", -1.0]], "unk_id": 1}})");
  EXPECT_NE(msg.find("model.unk_id"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unigram.json"), std::string::npos) << msg;
}

TEST(Unigram, UnknownCharacterWithoutUnkIdIsAnError) {
  Tokenizer tok = Tokenizer::from_json_text(
      R"({"model": {"type": "Unigram", "vocab": [["a", -1.0], ["ab", -1.5]]}})", "no-unk.json");
  EXPECT_EQ(tok.encode("aab"), (std::vector<int64_t>{0, 1}));
  try {
    tok.encode("abc");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unk_id"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-unk.json"), std::string::npos) << e.what();
  }
}

TEST(Precompiled, MalformedCharsmapsNameTheField) {
  auto with_charsmap = [](const std::string& b64) {
    return R"({"normalizer": {"type": "Precompiled", "precompiled_charsmap": ")" + b64 +
           R"("}, "model": {"type": "Unigram", "vocab": [["a", -1.0]], "unk_id": 0}})";
  };
  for (const char* bad : {"not base64!", "AAA", "AAAAAA=="}) {
    std::string msg = load_error(with_charsmap(bad));
    EXPECT_NE(msg.find("normalizer.precompiled_charsmap"), std::string::npos) << bad << ": " << msg;
  }
  // A trie of one unit whose offset points outside it: a clear error when used, as the
  // tokenizers package panics there.
  Tokenizer tok = Tokenizer::from_json_text(with_charsmap("BAAAAAAABAA="), "corrupt.json");
  try {
    tok.encode("a");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("precompiled_charsmap is corrupt"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ingot::text
