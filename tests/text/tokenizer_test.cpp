// Conformance of ingot's tokenizers with the Hugging Face `tokenizers` package: every
// fixture under tests/fixtures/tokenizers/ (made by tools/reference/make_tokenizer_fixtures.py)
// must encode and decode the committed corpus exactly as recorded.
#include "ingot/text/tokenizer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/regex.h"
#include "ingot/text/tokenizer/unicode.h"
#include "models/fixture_path.h"

namespace ingot::text {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  return json::parse(f);
}

// Printable preview of a corpus string for failure messages.
std::string preview(const std::string& s) {
  std::string shown = json(s.substr(0, 60)).dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? shown + "..." : shown;
}

std::string ids_str(const std::vector<int64_t>& ids) {
  std::vector<int64_t> head(ids.begin(), ids.begin() + std::min<size_t>(ids.size(), 24));
  return fmt::format("[{}{}]", fmt::join(head, ","), ids.size() > 24 ? ",..." : "");
}

class TokenizerConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerConformance, MatchesHuggingFaceTokenizers) {
  const std::string name = GetParam();
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/" + name));
  json corpus = read_json(fixture_path("tokenizers/corpus.json"))["strings"];
  json expected = read_json(fixture_path("tokenizers/" + name + "/expected.json"));
  EXPECT_EQ(tok.vocab_size(), expected["vocab_size"].get<size_t>());
  EXPECT_EQ(tok.model_vocab_size(), expected["model_vocab_size"].get<size_t>());

  const json& cases = expected["cases"];
  ASSERT_EQ(cases.size(), corpus.size());
  size_t matched = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string text = corpus[i].get<std::string>();
    const json& c = cases[i];
    auto want_ids = c["ids"].get<std::vector<int64_t>>();
    auto want_plain =
        c["ids_plain"].is_null() ? want_ids : c["ids_plain"].get<std::vector<int64_t>>();
    std::vector<int64_t> ids = tok.encode(text, true);
    std::vector<int64_t> plain = tok.encode(text, false);
    std::string decoded = tok.decode(want_ids, false);
    std::string decoded_skip = tok.decode(want_ids, true);
    bool ok = true;
    if (ids != want_ids) {
      ok = false;
      ADD_FAILURE() << name << " #" << i << " " << preview(text) << "\n  encode:   " << ids_str(ids)
                    << "\n  expected: " << ids_str(want_ids);
    }
    if (plain != want_plain) {
      ok = false;
      ADD_FAILURE() << name << " #" << i << " " << preview(text)
                    << " encode(add_special_tokens=false)\n  got:      " << ids_str(plain)
                    << "\n  expected: " << ids_str(want_plain);
    }
    if (decoded != c["decoded"].get<std::string>()) {
      ok = false;
      ADD_FAILURE() << name << " #" << i << " decode:\n  got:      " << preview(decoded)
                    << "\n  expected: " << preview(c["decoded"].get<std::string>());
    }
    if (decoded_skip != c["decoded_skip"].get<std::string>()) {
      ok = false;
      ADD_FAILURE() << name << " #" << i
                    << " decode(skip_special_tokens):\n  got:      " << preview(decoded_skip)
                    << "\n  expected: " << preview(c["decoded_skip"].get<std::string>());
    }
    matched += ok;
  }
  std::cout << "[ conformance ] " << name << ": " << matched << "/" << cases.size()
            << " corpus strings match\n";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TokenizerConformance,
                         ::testing::Values("gpt2", "roberta", "llama3", "qwen2", "llama2",
                                           "mistral", "spm_unk", "bert", "bert_cased", "wordlevel",
                                           "wordlevel_nfd", "t5", "unigram_bf", "t5_encdec"),
                         [](const auto& info) { return info.param; });

// PCRE2 (ingot) and Oniguruma (tokenizers) must agree on the character classes that the
// GPT-2 / Llama 3 / Qwen2 split patterns are built from.
TEST(TokenizerRegex, CharacterClassesMatchOniguruma) {
  json classes = read_json(fixture_path("tokenizers/regex_classes.json"));
  std::string all;
  std::vector<size_t> offsets;  // byte offset of each code point in `all`
  std::vector<char32_t> code_points;
  for (char32_t c = 0; c < 0x110000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    offsets.push_back(all.size());
    code_points.push_back(c);
    tokenizer::append_utf8(all, c);
  }
  for (auto [name, pattern] : {std::pair{"s", R"(\s)"},
                               {"L", R"(\p{L})"},
                               {"N", R"(\p{N})"},
                               {"d", R"(\d)"},
                               {"w", R"(\w)"}}) {
    std::vector<bool> expected(0x110000, false);
    for (const auto& r : classes[name]) {
      for (auto c = r[0].get<uint32_t>(); c <= r[1].get<uint32_t>(); ++c) expected[c] = true;
    }
    std::vector<bool> actual(0x110000, false);
    std::vector<tokenizer::Match> matches;
    tokenizer::Regex(pattern, "test").find_all(all, matches);
    for (auto [start, end] : matches) {
      size_t i = std::lower_bound(offsets.begin(), offsets.end(), start) - offsets.begin();
      actual[code_points[i]] = true;
    }
    std::vector<std::string> differ;
    for (char32_t c = 0; c < 0x110000; ++c) {
      if (actual[c] != expected[c])
        differ.push_back(fmt::format("U+{:04X}", static_cast<uint32_t>(c)));
    }
    EXPECT_TRUE(differ.empty())
        << "\\" << name << ": " << differ.size() << " code points differ, e.g. "
        << fmt::format("{}", fmt::join(differ.begin(),
                                       differ.begin() + std::min<size_t>(differ.size(), 20), " "));
  }
}

// Older tokenizer.json files write merges as "a b" strings rather than pairs.
TEST(Tokenizer, LegacyStringMerges) {
  json doc = read_json(fixture_path("tokenizers/gpt2/tokenizer.json"));
  for (auto& m : doc["model"]["merges"])
    m = m[0].get<std::string>() + " " + m[1].get<std::string>();
  doc["model"]["merges"].insert(doc["model"]["merges"].begin(), "#version: 0.2");
  Tokenizer legacy = Tokenizer::from_json_text(doc.dump(), "legacy gpt2");
  json corpus = read_json(fixture_path("tokenizers/corpus.json"))["strings"];
  json expected = read_json(fixture_path("tokenizers/gpt2/expected.json"))["cases"];
  for (size_t i = 0; i < corpus.size(); ++i) {
    EXPECT_EQ(legacy.encode(corpus[i].get<std::string>()),
              expected[i]["ids"].get<std::vector<int64_t>>())
        << "#" << i;
  }
}

TEST(Tokenizer, TokenLookups) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/qwen2"));
  auto eot = tok.token_to_id("<|endoftext|>");
  ASSERT_TRUE(eot.has_value());
  EXPECT_EQ(tok.id_to_token(*eot), "<|endoftext|>");
  EXPECT_TRUE(tok.is_special(*eot));
  auto tool = tok.token_to_id("<tool_call>");
  ASSERT_TRUE(tool.has_value());
  EXPECT_FALSE(tok.is_special(*tool));  // added, but not special: decode keeps it
  EXPECT_FALSE(tok.token_to_id("no such token at all").has_value());
  EXPECT_FALSE(tok.id_to_token(1 << 30).has_value());
  EXPECT_EQ(tok.encode("<|im_start|>"), std::vector<int64_t>{*tok.token_to_id("<|im_start|>")});
  EXPECT_TRUE(tok.encode("").empty());
  // Unknown ids are skipped by decode, as in tokenizers.
  std::vector<int64_t> ids = tok.encode("hello");
  ids.insert(ids.begin(), 1 << 30);
  EXPECT_EQ(tok.decode(ids), "hello");
}

TEST(Tokenizer, ConcurrentEncodesAgree) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/llama3"));
  json corpus = read_json(fixture_path("tokenizers/corpus.json"))["strings"];
  std::vector<std::vector<int64_t>> serial;
  for (const auto& s : corpus) serial.push_back(tok.encode(s.get<std::string>()));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t i = 0; i < corpus.size(); ++i) {
          mismatches[t] += tok.encode(corpus[i].get<std::string>()) != serial[i];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

// --- errors -----------------------------------------------------------------------------

class TokenizerErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ingot_tok_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Loads `text` from a file and returns the error message, "" when it loads.
  template <typename E>
  std::string load_error(const std::string& text) {
    std::string path = (dir_ / "tokenizer.json").string();
    std::ofstream(path) << text;
    try {
      Tokenizer::from_file(path);
    } catch (const E& e) {
      return e.what();
    } catch (const std::exception& e) {
      return std::string("wrong exception type: ") + e.what();
    }
    return "";
  }

  fs::path dir_;
};

constexpr const char* kTinyModel =
    R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

TEST_F(TokenizerErrors, UnknownComponentTypesNameTheTypeAndFile) {
  std::string msg = load_error<NotSupportedError>(
      fmt::format(R"({{"normalizer": {{"type": "Transliterate"}}, {}}})", kTinyModel));
  EXPECT_NE(msg.find("Transliterate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tokenizer.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("normalizer"), std::string::npos) << msg;

  msg = load_error<NotSupportedError>(R"({"model": {"type": "Ngram", "vocab": []}})");
  EXPECT_NE(msg.find("Ngram"), std::string::npos) << msg;

  msg = load_error<NotSupportedError>(fmt::format(
      R"({{"pre_tokenizer": {{"type": "Sequence", "pretokenizers": [{{"type": "UnicodeScripts"}}]}}, {}}})",
      kTinyModel));
  EXPECT_NE(msg.find("UnicodeScripts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pre_tokenizer.pretokenizers[0]"), std::string::npos) << msg;

  msg = load_error<NotSupportedError>(
      fmt::format(R"({{"decoder": {{"type": "CTC"}}, {}}})", kTinyModel));
  EXPECT_NE(msg.find("CTC"), std::string::npos) << msg;
}

TEST_F(TokenizerErrors, MalformedFilesNameTheField) {
  std::string msg = load_error<IoError>("{ not json");
  EXPECT_NE(msg.find("not valid JSON"), std::string::npos) << msg;

  msg = load_error<IoError>(R"({"normalizer": null})");
  EXPECT_NE(msg.find("'model'"), std::string::npos) << msg;

  msg = load_error<IoError>(R"({"model": {"type": "BPE", "vocab": {"a": "x"}, "merges": []}})");
  EXPECT_NE(msg.find("model.vocab"), std::string::npos) << msg;

  msg = load_error<IoError>(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a c"]}})");
  EXPECT_NE(msg.find("model.merges[0]"), std::string::npos) << msg;

  msg = load_error<IoError>(fmt::format(
      R"({{"pre_tokenizer": {{"type": "Split", "pattern": {{"Regex": "a"}}, "behavior": "Sideways", "invert": false}}, {}}})",
      kTinyModel));
  EXPECT_NE(msg.find("pre_tokenizer.behavior"), std::string::npos) << msg;

  msg = load_error<IoError>(fmt::format(
      R"({{"post_processor": {{"type": "TemplateProcessing", "single": [{{"SpecialToken": {{"id": "<s>", "type_id": 0}}}}], "special_tokens": {{}}}}, {}}})",
      kTinyModel));
  EXPECT_NE(msg.find("post_processor.single[0]"), std::string::npos) << msg;

  msg = load_error<IoError>(R"({"added_tokens": [{"id": 3}], )" + std::string(kTinyModel) + "}");
  EXPECT_NE(msg.find("added_tokens[0].content"), std::string::npos) << msg;
}

TEST_F(TokenizerErrors, MissingFilesAndBadInput) {
  try {
    Tokenizer::from_folder(dir_.string());
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
  }
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/gpt2"));
  try {
    tok.encode("ok \xC3\x28 bad");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("byte 3"), std::string::npos) << e.what();
  }
}

TEST(TokenizerUnicode, NormalFormsAndLossyDecoding) {
  using tokenizer::NormalForm;
  using tokenizer::unicode_normalize;
  EXPECT_EQ(unicode_normalize("e\u0301", NormalForm::NFC), "\u00e9");
  EXPECT_EQ(unicode_normalize("\u00e9", NormalForm::NFD), "e\u0301");
  EXPECT_EQ(unicode_normalize("\ufb01", NormalForm::NFKC), "fi");
  EXPECT_EQ(unicode_normalize("\ud55c", NormalForm::NFD), "\u1112\u1161\u11ab");
  EXPECT_EQ(unicode_normalize("\u1112\u1161\u11ab", NormalForm::NFC), "\ud55c");
  // Canonical reordering: dot below (220) sorts before dot above (230).
  EXPECT_EQ(unicode_normalize("s\u0307\u0323", NormalForm::NFC), "\u1e69");
  EXPECT_EQ(tokenizer::utf8_lossy("a\xF0\x9F\x98z\xFF"), "a\uFFFDz\uFFFD");
}

}  // namespace
}  // namespace ingot::text
