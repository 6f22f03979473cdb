// Pre-tokenizers: split normalized text into the pieces the model encodes one by one.
#include <algorithm>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {

SplitBehavior split_behavior_from_json(const JsonNode& node) {
  std::string s = node.get_string();
  if (s == "Removed") return SplitBehavior::Removed;
  if (s == "Isolated") return SplitBehavior::Isolated;
  if (s == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (s == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (s == "Contiguous") return SplitBehavior::Contiguous;
  node.fail("should be one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

void split_piece(const Piece& piece, const std::vector<Span>& spans, SplitBehavior behavior,
                 std::vector<Piece>& out) {
  // (start, end, remove) like NormalizedString::split, then slice the kept ones.
  std::vector<Span> parts;  // is_match reused as "remove"
  parts.reserve(spans.size());
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Span& s : spans) parts.push_back({s.start, s.end, false});
      break;
    case SplitBehavior::Removed:
      parts = spans;
      break;
    case SplitBehavior::Contiguous: {
      bool previous_match = false;
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !parts.empty()) {
          parts.back().end = s.end;
        } else {
          parts.push_back({s.start, s.end, false});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithPrevious: {
      bool previous_match = false;
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !parts.empty()) {
          parts.back().end = s.end;
        } else {
          parts.push_back({s.start, s.end, false});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous_match = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !parts.empty()) {
          parts.back().start = it->start;
        } else {
          parts.push_back({it->start, it->end, false});
        }
        previous_match = it->is_match;
      }
      std::reverse(parts.begin(), parts.end());
      break;
    }
  }
  for (const Span& p : parts) {
    if (p.is_match || p.end == p.start) continue;
    out.push_back({piece.text.substr(p.start, p.end - p.start), piece.at_origin && p.start == 0});
  }
}

const ByteLevelAlphabet& ByteLevelAlphabet::get() {
  static const ByteLevelAlphabet alphabet = [] {
    ByteLevelAlphabet a;
    std::fill(std::begin(a.char_to_byte), std::end(a.char_to_byte), int16_t{-1});
    // Printable bytes stand for themselves; the others get U+0100 upwards, in byte order.
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      char32_t c = printable ? static_cast<char32_t>(b) : next++;
      append_utf8(a.byte_to_utf8[b], c);
      a.char_to_byte[c] = static_cast<int16_t>(b);
    }
    return a;
  }();
  return alphabet;
}

std::string byte_level_encode(std::string_view text) {
  const ByteLevelAlphabet& alphabet = ByteLevelAlphabet::get();
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) out += alphabet.byte_to_utf8[static_cast<unsigned char>(c)];
  return out;
}

namespace {

// Spans where each code point satisfying `pred` is its own match (char patterns).
template <typename Pred>
void char_spans(std::string_view text, Pred&& pred, std::vector<Span>& out) {
  if (text.empty()) {
    out.push_back({0, 0, false});
    return;
  }
  size_t last = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t start = pos;
    char32_t c = next_code_point(text, pos);
    if (pred(c)) {
      if (last < start) out.push_back({last, start, false});
      out.push_back({start, pos, true});
      last = pos;
    }
  }
  if (last < text.size()) out.push_back({last, text.size(), false});
}

template <typename Pred>
void split_all_on_chars(std::vector<Piece>& pieces, Pred&& pred, SplitBehavior behavior) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  std::vector<Span> spans;
  for (const Piece& p : pieces) {
    spans.clear();
    char_spans(p.text, pred, spans);
    split_piece(p, spans, behavior, out);
  }
  pieces.swap(out);
}

// Splits every piece at the matches of `matcher` (a Regex, or a Pattern that may be a
// literal string); `invert` treats the gaps between matches as the delimiters.
template <typename Matcher>
void split_all_on_regex(std::vector<Piece>& pieces, const Matcher& matcher, SplitBehavior behavior,
                        bool invert) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 4);
  std::vector<Match> matches;
  std::vector<Span> spans;
  for (const Piece& p : pieces) {
    matches.clear();
    spans.clear();
    matcher.find_all(p.text, matches);
    spans_from_matches(p.text.size(), matches, spans);
    if (invert) {
      for (Span& s : spans) s.is_match = !s.is_match;
    }
    split_piece(p, spans, behavior, out);
  }
  pieces.swap(out);
}

// GPT-2's pre-tokenization regex, as used by the ByteLevel pre-tokenizer.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevel final : public PreTokenizer {
 public:
  explicit ByteLevel(const JsonNode& node)
      : add_prefix_space_(node.boolean("add_prefix_space", true)),
        use_regex_(node.boolean("use_regex", true)) {
    if (use_regex_) regex_ = std::make_unique<Regex>(kGpt2Pattern, "ByteLevel pre-tokenizer");
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_) {
      for (Piece& p : pieces) {
        if (p.text.empty() || p.text[0] != ' ') p.text = " " + p.text;
      }
    }
    if (use_regex_) split_all_on_regex(pieces, *regex_, SplitBehavior::Isolated, false);
    for (Piece& p : pieces) p.text = byte_level_encode(p.text);
  }

 private:
  bool add_prefix_space_, use_regex_;
  std::unique_ptr<Regex> regex_;
};

class Split final : public PreTokenizer {
 public:
  explicit Split(const JsonNode& node)
      : pattern_(Pattern::from_json(node.at("pattern"))),
        behavior_(split_behavior_from_json(node.at("behavior"))),
        invert_(node.boolean("invert", false)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_regex(pieces, pattern_, behavior_, invert_);
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

enum class PrependScheme { First, Never, Always };

class Metaspace final : public PreTokenizer {
 public:
  explicit Metaspace(const JsonNode& node) : replacement_(node.character("replacement")) {
    append_utf8(replacement_utf8_, replacement_);
    std::string scheme = node.string("prepend_scheme", "always");
    if (scheme == "first") {
      scheme_ = PrependScheme::First;
    } else if (scheme == "never") {
      scheme_ = PrependScheme::Never;
    } else if (scheme == "always") {
      scheme_ = PrependScheme::Always;
    } else {
      node.at("prepend_scheme").fail("should be \"first\", \"never\" or \"always\"");
    }
    if (node.find("add_prefix_space") && !node.boolean("add_prefix_space")) {
      if (scheme_ != PrependScheme::Never && node.find("prepend_scheme")) {
        node.at("add_prefix_space").fail("contradicts prepend_scheme");
      }
      scheme_ = PrependScheme::Never;
    }
    split_ = node.boolean("split", true);
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (Piece& p : pieces) {
      if (p.text.find(' ') != std::string::npos) {
        std::string replaced;
        replaced.reserve(p.text.size() * 2);
        for (char c : p.text) {
          if (c == ' ') {
            replaced += replacement_utf8_;
          } else {
            replaced.push_back(c);
          }
        }
        p.text.swap(replaced);
      }
      bool starts_with_replacement =
          p.text.compare(0, replacement_utf8_.size(), replacement_utf8_) == 0;
      bool prepend =
          scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && p.at_origin);
      if (prepend && !starts_with_replacement) p.text = replacement_utf8_ + p.text;
    }
    if (split_) {
      split_all_on_chars(
          pieces, [this](char32_t c) { return c == replacement_; }, SplitBehavior::MergedWithNext);
    }
  }

 private:
  char32_t replacement_;
  std::string replacement_utf8_;
  PrependScheme scheme_ = PrependScheme::Always;
  bool split_ = true;
};

class BertPreTokenizer final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_chars(pieces, is_whitespace, SplitBehavior::Removed);
    split_all_on_chars(pieces, is_punctuation, SplitBehavior::Isolated);
  }
};

class Whitespace final : public PreTokenizer {
 public:
  Whitespace()
      : regex_(whitespace_pre_tokenizer_pattern(), "Whitespace pre-tokenizer",
               /*translate=*/false) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_regex(pieces, regex_, SplitBehavior::Removed, true);
  }

 private:
  Regex regex_;
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_chars(pieces, is_whitespace, SplitBehavior::Removed);
  }
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_chars(pieces, is_numeric,
                       individual_ ? SplitBehavior::Isolated : SplitBehavior::Contiguous);
  }

 private:
  bool individual_;
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(SplitBehavior behavior) : behavior_(behavior) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_chars(pieces, is_punctuation, behavior_);
  }

 private:
  SplitBehavior behavior_;
};

class CharDelimiterSplit final : public PreTokenizer {
 public:
  explicit CharDelimiterSplit(char32_t delimiter) : delimiter_(delimiter) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    split_all_on_chars(
        pieces, [this](char32_t c) { return c == delimiter_; }, SplitBehavior::Removed);
  }

 private:
  char32_t delimiter_;
};

class Sequence final : public PreTokenizer {
 public:
  explicit Sequence(const JsonNode& node) {
    JsonNode list = node.at("pretokenizers");
    for (size_t i = 0; i < list.array_size(); ++i) parts_.push_back(make_pre_tokenizer(list.at(i)));
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& p : parts_) p->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const JsonNode& node) {
  std::string type = node.type();
  if (type == "ByteLevel") return std::make_unique<ByteLevel>(node);
  if (type == "Split") return std::make_unique<Split>(node);
  if (type == "Metaspace") return std::make_unique<Metaspace>(node);
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "Whitespace") return std::make_unique<Whitespace>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Digits") return std::make_unique<Digits>(node.boolean("individual_digits", false));
  if (type == "Punctuation") {
    auto behavior = node.find("behavior");
    return std::make_unique<Punctuation>(behavior ? split_behavior_from_json(*behavior)
                                                  : SplitBehavior::Isolated);
  }
  if (type == "CharDelimiterSplit") {
    return std::make_unique<CharDelimiterSplit>(node.character("delimiter"));
  }
  if (type == "Sequence") return std::make_unique<Sequence>(node);
  node.unsupported("pre-tokenizer", type,
                   "ByteLevel, Split, Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, "
                   "Digits, Punctuation, CharDelimiterSplit, Sequence");
}

}  // namespace ingot::text::tokenizer
