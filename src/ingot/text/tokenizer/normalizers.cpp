// Normalizers: text -> text, applied to each stretch of input between added tokens.
#include <algorithm>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {

std::unique_ptr<Normalizer> make_precompiled_normalizer(const JsonNode& node);

namespace {

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c & 0x80) == 0; });
}

// Rebuilds `text` from fn(code_point, out) over each of its code points.
template <typename Fn>
void rewrite_chars(std::string& text, Fn&& fn) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t pos = 0; pos < text.size();) fn(next_code_point(text, pos), out);
  text.swap(out);
}

void lowercase(std::string& text) {
  if (is_ascii(text)) {
    for (char& c : text) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return;
  }
  rewrite_chars(text, [](char32_t c, std::string& out) { append_lowercase(out, c); });
}

class BertNormalizer final : public Normalizer {
 public:
  explicit BertNormalizer(const JsonNode& node)
      : clean_text_(node.boolean("clean_text", true)),
        handle_chinese_chars_(node.boolean("handle_chinese_chars", true)),
        lowercase_(node.boolean("lowercase", true)),
        strip_accents_(node.optional_boolean("strip_accents").value_or(lowercase_)) {}

  void normalize(std::string& text) const override {
    if (clean_text_) {
      rewrite_chars(text, [](char32_t c, std::string& out) {
        if (c == 0 || c == 0xFFFD || is_bert_removed(c)) return;
        append_utf8(out, is_whitespace(c) ? U' ' : c);
      });
    }
    if (handle_chinese_chars_ && !is_ascii(text)) {
      rewrite_chars(text, [](char32_t c, std::string& out) {
        if (is_chinese_char(c)) {
          out.push_back(' ');
          append_utf8(out, c);
          out.push_back(' ');
        } else {
          append_utf8(out, c);
        }
      });
    }
    if (strip_accents_ && !is_ascii(text)) {
      text = unicode_normalize(text, NormalForm::NFD);
      rewrite_chars(text, [](char32_t c, std::string& out) {
        if (!is_nonspacing_mark(c)) append_utf8(out, c);
      });
    }
    if (lowercase_) lowercase(text);
  }

 private:
  bool clean_text_, handle_chinese_chars_, lowercase_, strip_accents_;
};

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(NormalForm form) : form_(form) {}
  void normalize(std::string& text) const override { text = unicode_normalize(text, form_); }

 private:
  NormalForm form_;
};

class Lowercase final : public Normalizer {
 public:
  void normalize(std::string& text) const override { lowercase(text); }
};

// Strip: removes leading and/or trailing whitespace.
class Strip final : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        size_t pos = begin;
        if (!is_whitespace(next_code_point(text, pos))) break;
        begin = pos;
      }
    }
    if (right_) {
      while (end > begin) {
        size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        size_t pos = start;
        if (!is_whitespace(next_code_point(text, pos))) break;
        end = start;
      }
    }
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

class StripAccents final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    if (is_ascii(text)) return;
    rewrite_chars(text, [](char32_t c, std::string& out) {
      if (!is_combining_mark(c)) append_utf8(out, c);
    });
  }
};

class Replace final : public Normalizer {
 public:
  explicit Replace(const JsonNode& node)
      : pattern_(Pattern::from_json(node.at("pattern"))), content_(node.string("content")) {}
  void normalize(std::string& text) const override {
    std::vector<Match> matches;
    pattern_.find_all(text, matches);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size());
    size_t previous = 0;
    for (auto [start, end] : matches) {
      out.append(text, previous, start - previous);
      out += content_;
      previous = end;
    }
    out.append(text, previous);
    text.swap(out);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text = prefix_ + text;
  }

 private:
  std::string prefix_;
};

// Nmt: SentencePiece's NMT cleaning (drop some controls, map odd spaces to ' ').
class Nmt final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    rewrite_chars(text, [](char32_t c, std::string& out) {
      if ((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F || c == 0x8F ||
          c == 0x9F) {
        return;
      }
      bool space = c == 0x9 || c == 0xA || c == 0xC || c == 0xD || c == 0x1680 ||
                   (c >= 0x200B && c <= 0x200F) || c == 0x2028 || c == 0x2029 || c == 0x2581 ||
                   c == 0xFEFF || c == 0xFFFD;
      append_utf8(out, space ? U' ' : c);
    });
  }
};

class ByteLevelNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override { text = byte_level_encode(text); }
};

class Sequence final : public Normalizer {
 public:
  explicit Sequence(const JsonNode& node) {
    JsonNode list = node.at("normalizers");
    for (size_t i = 0; i < list.array_size(); ++i) parts_.push_back(make_normalizer(list.at(i)));
  }
  void normalize(std::string& text) const override {
    for (const auto& n : parts_) n->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const JsonNode& node) {
  std::string type = node.type();
  if (type == "BertNormalizer") return std::make_unique<BertNormalizer>(node);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(NormalForm::NFD);
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(NormalForm::NFC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(NormalForm::NFKD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(NormalForm::NFKC);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "Strip") {
    return std::make_unique<Strip>(node.boolean("strip_left", true),
                                   node.boolean("strip_right", true));
  }
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Replace") return std::make_unique<Replace>(node);
  if (type == "Prepend") return std::make_unique<Prepend>(node.string("prepend"));
  if (type == "Nmt") return std::make_unique<Nmt>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  if (type == "Precompiled") return make_precompiled_normalizer(node);
  if (type == "Sequence") return std::make_unique<Sequence>(node);
  node.unsupported("normalizer", type,
                   "BertNormalizer, NFD, NFC, NFKD, NFKC, Lowercase, Strip, StripAccents, "
                   "Replace, Prepend, Nmt, Precompiled, ByteLevel, Sequence");
}

}  // namespace ingot::text::tokenizer
