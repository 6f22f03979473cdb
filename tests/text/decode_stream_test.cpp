// DecodeStream against the full decode: for every tokenizer fixture (the `tokenizers`
// conformance fixtures of tests/fixtures/tokenizers) the streamed pieces concatenate to
// Tokenizer::decode of all ids, also when ids split multi-byte characters (byte-fallback
// <0xNN> tokens, byte-level single-byte tokens), after a prompt context, and on random id
// sequences; a piece never ends inside a character.
#include "ingot/text/decode_stream.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/unicode.h"
#include "models/fixture_path.h"

namespace ingot::text {
namespace {

using ingot::testing::fixture_path;
using nlohmann::json;

const std::vector<std::string> kFixtures = {"gpt2",       "roberta",   "llama3",       "qwen2",
                                            "llama2",     "mistral",   "spm_unk",      "bert",
                                            "bert_cased", "wordlevel", "wordlevel_nfd"};

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

json read_json(const std::string& path) {
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << path;
  return json::parse(f);
}

std::string shown(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Streams `ids` and checks the invariants on the way: every piece is valid UTF-8 and
// extends a prefix of `expected`. Returns the concatenation (flush included).
struct Streamed {
  std::string text;
  size_t max_window = 0;
  std::vector<std::string> pieces;  // one per step (empty when held back), then the flush
};

Streamed stream(const Tokenizer& tok, std::span<const int64_t> ids, bool skip,
                std::span<const int64_t> context = {}) {
  DecodeStream ds(tok, skip, context);
  Streamed out;
  for (int64_t id : ids) {
    std::string piece = ds.step(id);
    EXPECT_EQ(tokenizer::find_invalid_utf8(piece), std::string::npos) << shown(piece);
    out.text += piece;
    out.pieces.push_back(std::move(piece));
    out.max_window = std::max(out.max_window, ds.window().size());
  }
  out.pieces.push_back(ds.flush());
  out.text += out.pieces.back();
  EXPECT_EQ(ds.pending(), 0u);
  EXPECT_EQ(ds.flush(), "");
  return out;
}

// The ids of byte `b` as a single-byte token: <0xNN> (byte fallback) or the byte's
// ByteLevel character; nullopt when the tokenizer has neither.
std::optional<int64_t> byte_token(const Tokenizer& tok, unsigned char b) {
  if (auto id = tok.token_to_id(fmt::format("<0x{:02X}>", b))) return id;
  return tok.token_to_id(tokenizer::byte_level_encode(std::string(1, char(b))));
}

bool is_byte_fallback_token(const Tokenizer& tok, int64_t id) {
  auto t = tok.id_to_token(id);
  return t && t->size() == 6 && t->starts_with("<0x") && t->ends_with(">");
}

class DecodeStreamFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tok_.emplace(Tokenizer::from_folder(fixture_path("tokenizers/" + GetParam())));
  }
  const Tokenizer& tok() const { return *tok_; }
  // Byte tokens of every byte of `text`, or empty when the tokenizer has no byte tokens.
  std::vector<int64_t> bytes_of(std::string_view text) const {
    std::vector<int64_t> ids;
    for (unsigned char b : text) {
      auto id = byte_token(tok(), b);
      if (!id) return {};
      ids.push_back(*id);
    }
    return ids;
  }
  std::optional<Tokenizer> tok_;
};

// Every corpus string's reference ids (what `tokenizers` encodes), with and without
// skip_special_tokens: the stream equals decode(ids), and the window stays small.
TEST_P(DecodeStreamFixture, CorpusEqualsFullDecode) {
  json corpus = read_json(fixture_path("tokenizers/corpus.json"))["strings"];
  json cases = read_json(fixture_path("tokenizers/" + GetParam() + "/expected.json"))["cases"];
  size_t max_window = 0, held_steps = 0, steps = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto ids = cases[i]["ids"].get<std::vector<int64_t>>();
    for (bool skip : {false, true}) {
      const std::string expected = tok().decode(ids, skip);
      Streamed s = stream(tok(), ids, skip);
      EXPECT_EQ(s.text, expected) << GetParam() << " #" << i << " skip=" << skip << "\n  corpus "
                                  << shown(corpus[i].get<std::string>());
      max_window = std::max(max_window, s.max_window);
      for (size_t k = 0; k + 1 < s.pieces.size(); ++k) held_steps += s.pieces[k].empty();
      steps += ids.size();
    }
  }
  EXPECT_LE(max_window, 24u) << "the window should hold only the last piece's ids";
  std::cout << "[ stream ] " << GetParam() << ": " << steps << " steps, " << held_steps
            << " without new text, largest window " << max_window << " ids\n";
}

// A prompt as context: the stream of the rest continues the prompt's text exactly (e.g.
// the space before the first generated word survives a Metaspace / Strip decoder).
TEST_P(DecodeStreamFixture, ContinuesAPromptContext) {
  json cases = read_json(fixture_path("tokenizers/" + GetParam() + "/expected.json"))["cases"];
  size_t checked = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    auto ids = cases[i]["ids"].get<std::vector<int64_t>>();
    const std::string full = tok().decode(ids);
    for (size_t k : {size_t(1), ids.size() / 2, ids.size() > 9 ? ids.size() - 3 : 0}) {
      if (k == 0 || k >= ids.size()) continue;
      std::span<const int64_t> prompt(ids.data(), k), rest(ids.data() + k, ids.size() - k);
      // The prompt's text as it shows when more follows (decode() for all decoders but a
      // look-ahead one, whose last token renders differently at the end of a text).
      const std::string shown_prompt = tok().decode_continued(prompt);
      // A cut inside a character or a byte-fallback run: the prompt's text is not a
      // prefix of the full text, so there is no text to continue.
      if (!full.starts_with(shown_prompt) || shown_prompt.ends_with(kReplacement)) continue;
      EXPECT_EQ(stream(tok(), rest, false, prompt).text, full.substr(shown_prompt.size()))
          << GetParam() << " #" << i << " cut after " << k << " ids";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20u);
}

// The fixtures with single-byte tokens: <0xNN> (byte fallback) or byte-level BPE.
class DecodeStreamBytes : public DecodeStreamFixture {};

// Byte tokens that split CJK, emoji and accented characters between "Hello" and " world":
// no piece shows a partial character, and each character appears whole at its last byte.
TEST_P(DecodeStreamBytes, SplitMultiByteCharacters) {
  const std::string chars[] = {"中", "文", "😀", "é", "👍🏽", "日本"};
  std::vector<int64_t> ids = tok().encode("Hello", false);
  std::string split_text;
  for (const std::string& c : chars) split_text += c;
  std::vector<int64_t> bytes = bytes_of(split_text);
  ASSERT_FALSE(bytes.empty()) << GetParam() << " has no byte tokens";
  const size_t first_byte = ids.size();
  ids.insert(ids.end(), bytes.begin(), bytes.end());
  std::vector<int64_t> tail = tok().encode(" world and more text", false);
  ids.insert(ids.end(), tail.begin(), tail.end());

  for (bool skip : {false, true}) {
    Streamed s = stream(tok(), ids, skip);
    EXPECT_EQ(s.text, tok().decode(ids, skip));
    EXPECT_EQ(s.text.find(kReplacement), std::string::npos) << shown(s.text);
    // Which steps showed text among the byte tokens: exactly the last byte of each character
    // (when the previous character ends on the step before, as in a byte stream).
    std::string bytes_seen;
    size_t step = first_byte;
    for (unsigned char b : split_text) {
      bytes_seen.push_back(char(b));
      const bool completes = tokenizer::find_invalid_utf8(bytes_seen) == std::string::npos;
      EXPECT_EQ(!s.pieces[step].empty(), completes) << GetParam() << " step " << step;
      ++step;
    }
  }
}

// Random sequences of whole units (a vocabulary token, a special token, or the byte tokens
// of a whole character): the stream always equals the full decode.
TEST_P(DecodeStreamFixture, RandomSequencesEqualFullDecode) {
  std::mt19937 rng(12345);
  const int64_t vocab = int64_t(tok().vocab_size());
  std::vector<int64_t> specials;
  for (int64_t id = 0; id < vocab + 8; ++id) {
    if (tok().is_special(id)) specials.push_back(id);
  }
  const std::string chars[] = {"中", "😀", "é", "ß", "€", "👩‍👩‍👧", "\n", " "};
  for (int seq = 0; seq < 150; ++seq) {
    std::vector<int64_t> ids;
    for (int unit = 0; unit < 24; ++unit) {
      const int kind = int(rng() % 10);
      if (kind < 6) {
        const int64_t id = int64_t(rng() % uint64_t(vocab));
        // A lone <0xNN> may turn its byte-fallback run invalid (the documented exception).
        if (!is_byte_fallback_token(tok(), id)) ids.push_back(id);
      } else if (kind < 9) {
        std::vector<int64_t> b = bytes_of(chars[rng() % std::size(chars)]);
        ids.insert(ids.end(), b.begin(), b.end());
      } else if (!specials.empty()) {
        ids.push_back(specials[rng() % specials.size()]);
      }
    }
    for (bool skip : {false, true}) {
      ASSERT_EQ(stream(tok(), ids, skip).text, tok().decode(ids, skip))
          << GetParam() << " sequence " << seq << " skip=" << skip;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeStreamFixture, ::testing::ValuesIn(kFixtures),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Fixtures, DecodeStreamBytes,
                         ::testing::Values("gpt2", "roberta", "llama3", "qwen2", "llama2",
                                           "mistral"),
                         [](const auto& info) { return info.param; });

// The issue's case: a tiny Mistral tokenizer encodes CJK and emoji through <0xNN> tokens,
// so a token ends inside a character and more text follows. Streaming the old way (print
// decode(all) beyond what was printed, if it still starts with it) froze at the first
// U+FFFD; the stream shows everything.
TEST(DecodeStream, MistralTokenEndingInsideACharacter) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/mistral"));
  const std::string text = "Hello 日本語 😀 and then plenty of ordinary text after it.";
  std::vector<int64_t> ids = tok.encode(text, true);
  size_t inside = 0;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    if (tok.decode(std::span(ids).first(i + 1), true).ends_with(kReplacement)) ++inside;
  }
  ASSERT_GT(inside, 0u) << "the prefix decodes should end inside a character somewhere";
  Streamed s = stream(tok, ids, true);
  EXPECT_EQ(s.text, text);
  EXPECT_EQ(s.pieces.back(), "") << "nothing should be left for flush";

  // The old streamer, for contrast: it stops printing at the first held-back character.
  std::string printed;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string all = tok.decode(std::span(ids).first(i + 1), true);
    if (all.size() > printed.size() && all.starts_with(printed)) printed = all;
  }
  EXPECT_NE(printed, text);
}

// Pending bytes at the end of the stream come out of flush() as decode() shows them, and
// the stream goes on afterwards.
TEST(DecodeStream, FlushShowsAnIncompleteCharacter) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/llama2"));
  DecodeStream ds(tok);
  const int64_t e4 = *tok.token_to_id("<0xE4>");
  std::string text;
  for (int64_t id : tok.encode("Hello", false)) text += ds.step(id);
  EXPECT_EQ(text, "Hello");
  EXPECT_EQ(ds.step(e4), "");
  EXPECT_EQ(ds.pending(), 1u);
  EXPECT_EQ(ds.flush(), std::string(kReplacement));
  EXPECT_EQ(ds.pending(), 0u);
  EXPECT_EQ(ds.step(*tok.token_to_id("▁the")), " the");
}

// Unknown ids add no text (as in decode) and do not disturb the stream.
TEST(DecodeStream, UnknownIdsAddNothing) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/gpt2"));
  std::vector<int64_t> ids = tok.encode("Hello world, again", false);
  ids.insert(ids.begin() + 1, {int64_t(1) << 40, -5});
  EXPECT_EQ(stream(tok, ids, false).text, tok.decode(ids));
}

// The documented exception: a byte-fallback run decodes as valid text ("A"), then an
// incomplete byte makes the whole run invalid. decode() turns the run into U+FFFD, but the
// stream keeps the "A" it showed and continues with the new ids' own text.
TEST(DecodeStream, ByteFallbackRunTurningInvalidKeepsStreamedText) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/mistral"));
  const std::vector<int64_t> ids{*tok.token_to_id("<0x41>"), *tok.token_to_id("<0xE4>"),
                                 *tok.token_to_id("▁the")};
  Streamed s = stream(tok, ids, false);
  EXPECT_EQ(s.pieces[0], "A");
  EXPECT_EQ(s.text, "A" + tok.decode(std::span(ids).subspan(1)));
  EXPECT_EQ(tok.decode(ids), std::string(kReplacement) + std::string(kReplacement) + " the");
}

// A long context keeps only its tail in the window (the cost of a step does not depend on
// the prompt's length).
TEST(DecodeStream, KeepsOnlyTheContextTail) {
  Tokenizer tok = Tokenizer::from_folder(fixture_path("tokenizers/llama2"));
  std::string prompt;
  for (int i = 0; i < 50; ++i) prompt += "The quick brown fox jumps over the lazy dog. ";
  std::vector<int64_t> context = tok.encode(prompt, true);
  DecodeStream ds(tok, true, context);
  EXPECT_LE(ds.window().size(), 8u);
  EXPECT_EQ(ds.step(*tok.token_to_id("▁the")), " the");
}

}  // namespace
}  // namespace ingot::text
