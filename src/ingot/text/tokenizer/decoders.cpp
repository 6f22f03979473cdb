// Decoders: token strings -> text pieces, chained (the pieces are joined at the end).
#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {
namespace {

std::vector<char32_t> to_chars(std::string_view s) {
  std::vector<char32_t> chars;
  for (size_t pos = 0; pos < s.size();) chars.push_back(next_code_point(s, pos));
  return chars;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  size_t previous = 0;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + from.size())) {
    out.append(s, previous, pos - previous);
    out += to;
    previous = pos + from.size();
  }
  if (previous == 0) return;
  out.append(s, previous);
  s.swap(out);
}

// Tokens made of ByteLevel characters become their bytes; all bytes decode as one string.
class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    const ByteLevelAlphabet& alphabet = ByteLevelAlphabet::get();
    std::string bytes;
    for (const std::string& token : tokens) {
      size_t mark = bytes.size();
      bool all_mapped = true;
      for (size_t pos = 0; pos < token.size();) {
        char32_t c = next_code_point(token, pos);
        if (c >= 0x144 || alphabet.char_to_byte[c] < 0) {
          all_mapped = false;
          break;
        }
        bytes.push_back(static_cast<char>(alphabet.char_to_byte[c]));
      }
      if (!all_mapped) {
        bytes.resize(mark);
        bytes += token;
      }
    }
    tokens.assign(1, utf8_lossy(bytes));
  }
};

enum class PrependScheme { First, Never, Always };

class MetaspaceDecoder final : public Decoder {
 public:
  explicit MetaspaceDecoder(const JsonNode& node) : replacement_(node.character("replacement")) {
    std::string scheme = node.string("prepend_scheme", "always");
    never_ = scheme == "never";
    if (node.find("add_prefix_space") && !node.boolean("add_prefix_space")) never_ = true;
  }
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      const std::string& token = tokens[i];
      for (size_t pos = 0; pos < token.size();) {
        size_t start = pos;
        char32_t c = next_code_point(token, pos);
        if (c == replacement_) {
          if (i != 0 || never_) out.push_back(' ');
        } else {
          out.append(token, start, pos - start);
        }
      }
      tokens[i].swap(out);
    }
  }

 private:
  char32_t replacement_;
  bool never_ = false;
};

class WordPieceDecoder final : public Decoder {
 public:
  explicit WordPieceDecoder(const JsonNode& node)
      : prefix_(node.string("prefix", "##")), cleanup_(node.boolean("cleanup", true)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& token = tokens[i];
      if (i != 0) {
        if (token.starts_with(prefix_)) {
          token.erase(0, prefix_.size());
        } else {
          token = " " + token;
        }
      }
      if (cleanup_) {
        static constexpr std::pair<std::string_view, std::string_view> kCleanup[] = {
            {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
            {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
            {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (auto [from, to] : kCleanup) replace_all(token, from, to);
      }
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

// Runs of <0xNN> tokens become the string they encode, or one U+FFFD per byte if invalid.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string bytes;
    size_t byte_count = 0;
    auto flush = [&] {
      if (byte_count == 0) return;
      if (find_invalid_utf8(bytes) == std::string::npos) {
        out.push_back(bytes);
      } else {
        for (size_t i = 0; i < byte_count; ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      bytes.clear();
      byte_count = 0;
    };
    for (std::string& token : tokens) {
      int value = -1;
      if (token.size() == 6 && token.starts_with("<0x") && token.back() == '>') {
        value = parse_hex_byte(token[3], token[4]);
      }
      if (value >= 0) {
        bytes.push_back(static_cast<char>(value));
        ++byte_count;
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens.swap(out);
  }

 private:
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static int parse_hex_byte(char hi, char lo) {
    int h = hex_digit(hi), l = hex_digit(lo);
    return h < 0 || l < 0 ? -1 : h * 16 + l;
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const std::string& t : tokens) joined += t;
    tokens.assign(1, std::move(joined));
  }
};

// Removes up to `start` leading and `stop` trailing `content` characters of each token.
class StripDecoder final : public Decoder {
 public:
  explicit StripDecoder(const JsonNode& node)
      : content_(node.character("content")),
        start_(node.integer("start", 0)),
        stop_(node.integer("stop", 0)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::vector<char32_t> chars = to_chars(token);
      size_t begin = 0, end = chars.size();
      for (int64_t i = 0; i < start_ && begin < chars.size() && chars[begin] == content_; ++i) {
        ++begin;
      }
      for (int64_t i = 0; i < stop_ && end > begin && chars[end - 1] == content_; ++i) --end;
      std::string out;
      for (size_t i = begin; i < end; ++i) append_utf8(out, chars[i]);
      token.swap(out);
    }
  }

 private:
  char32_t content_;
  int64_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  explicit ReplaceDecoder(const JsonNode& node)
      : pattern_(Pattern::from_json(node.at("pattern"))), content_(node.string("content")) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<Match> matches;
    for (std::string& token : tokens) {
      matches.clear();
      pattern_.find_all(token, matches);
      if (matches.empty()) continue;
      std::string out;
      size_t previous = 0;
      for (auto [start, end] : matches) {
        out.append(token, previous, start - previous);
        out += content_;
        previous = end;
      }
      out.append(token, previous);
      token.swap(out);
    }
  }

 private:
  Pattern pattern_;
  std::string content_;
};

// BPEDecoder: the end-of-word suffix becomes a space (nothing after the last token).
class BpeDecoder final : public Decoder {
 public:
  explicit BpeDecoder(const JsonNode& node) : suffix_(node.string("suffix", "</w>")) {}
  void decode_chain(std::vector<std::string>& tokens) const override { render(tokens, false); }
  void decode_chain_continued(std::vector<std::string>& tokens) const override {
    render(tokens, true);
  }
  bool looks_ahead() const override { return true; }

 private:
  void render(std::vector<std::string>& tokens, bool continued) const {
    for (size_t i = 0; i < tokens.size(); ++i) {
      replace_all(tokens[i], suffix_, i + 1 == tokens.size() && !continued ? "" : " ");
    }
  }

  std::string suffix_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(const JsonNode& node) {
    JsonNode list = node.at("decoders");
    for (size_t i = 0; i < list.array_size(); ++i) parts_.push_back(make_decoder(list.at(i)));
  }
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& d : parts_) d->decode_chain(tokens);
  }
  void decode_chain_continued(std::vector<std::string>& tokens) const override {
    for (const auto& d : parts_) d->decode_chain_continued(tokens);
  }
  bool looks_ahead() const override {
    for (const auto& d : parts_) {
      if (d->looks_ahead()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const JsonNode& node) {
  std::string type = node.type();
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "Metaspace") return std::make_unique<MetaspaceDecoder>(node);
  if (type == "WordPiece") return std::make_unique<WordPieceDecoder>(node);
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") return std::make_unique<StripDecoder>(node);
  if (type == "Replace") return std::make_unique<ReplaceDecoder>(node);
  if (type == "BPEDecoder") return std::make_unique<BpeDecoder>(node);
  if (type == "Sequence") return std::make_unique<SequenceDecoder>(node);
  node.unsupported("decoder", type,
                   "ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace, "
                   "BPEDecoder, Sequence");
}

}  // namespace ingot::text::tokenizer
