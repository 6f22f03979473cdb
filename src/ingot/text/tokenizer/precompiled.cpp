// The Precompiled normalizer: SentencePiece's compiled normalization rules (T5, ALBERT,
// XLM-R, mBART ...), a character map stored in tokenizer.json as base64.
//
// The blob (spm_precompiled's format): a little-endian u32 trie size in bytes, the trie as
// u32 units of a darts-clone double array, then NUL-terminated replacement strings. A key
// (UTF-8 bytes) is looked up by common-prefix search; the *shortest* matching prefix wins
// and its replacement stands for the whole looked-up text. The text is processed one
// grapheme cluster at a time: a cluster under 6 bytes is first looked up whole; otherwise,
// or when that misses, each of its characters is looked up alone and kept when it misses.
// (This drops the rest of a cluster whose first characters match a shorter key, as
// tokenizers does.)
#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/grapheme.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {

std::unique_ptr<Normalizer> make_precompiled_normalizer(const JsonNode& node);

namespace {

// Standard base64 with padding (Rust base64's STANDARD engine); nullopt when malformed.
std::optional<std::string> decode_base64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    uint32_t bits = 0;
    for (int k = 0; k < 4; ++k) {
      int v = k >= 4 - pad ? 0 : value(text[i + k]);
      if (v < 0) return std::nullopt;
      bits = (bits << 6) | static_cast<uint32_t>(v);
    }
    out.push_back(static_cast<char>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xFF));
  }
  return out;
}

class Precompiled final : public Normalizer {
 public:
  explicit Precompiled(const JsonNode& node) : origin_(node.origin()) {
    JsonNode field = node.at("precompiled_charsmap");
    std::optional<std::string> blob = decode_base64(field.get_string());
    if (!blob) field.fail("should be base64 (standard alphabet, padded)");
    if (blob->size() < 4) field.fail("is too short for a charsmap (no trie size)");
    uint32_t trie_bytes = 0;
    for (int k = 3; k >= 0; --k) trie_bytes = (trie_bytes << 8) | static_cast<uint8_t>((*blob)[k]);
    size_t units = trie_bytes / 4;
    if (units == 0 || units > (blob->size() - 4) / 4) {
      field.fail(fmt::format("has a trie of {} bytes, which does not fit its {} bytes of data",
                             trie_bytes, blob->size() - 4));
    }
    trie_.resize(units);
    for (size_t i = 0; i < units; ++i) {
      const auto* b = reinterpret_cast<const unsigned char*>(blob->data() + 4 + 4 * i);
      trie_[i] = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
    }
    normalized_ = blob->substr(4 + units * 4);
    if (find_invalid_utf8(normalized_) != std::string_view::npos) {
      field.fail("has replacement strings that are not valid UTF-8");
    }
  }

  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    std::string_view view(text);
    bool modified = false;
    for (size_t start = 0; start < view.size();) {
      size_t end = grapheme_end(view, start);
      std::string_view cluster = view.substr(start, end - start);
      start = end;
      if (cluster.size() < 6) {
        if (auto replacement = transform(cluster)) {
          out += *replacement;
          modified = true;
          continue;
        }
      }
      for (size_t pos = 0; pos < cluster.size();) {
        size_t len = utf8_sequence_length(static_cast<unsigned char>(cluster[pos]));
        std::string_view ch = cluster.substr(pos, len);
        pos += len;
        if (auto replacement = transform(ch)) {
          out += *replacement;
          modified = true;
        } else {
          out += ch;
        }
      }
    }
    if (modified) text.swap(out);
  }

 private:
  // darts-clone unit fields.
  static bool has_leaf(uint32_t u) { return (u >> 8) & 1; }
  static uint32_t value(uint32_t u) { return u & 0x7FFFFFFFu; }
  static uint32_t label(uint32_t u) { return u & 0x800000FFu; }
  static uint32_t offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

  uint32_t unit(size_t pos) const {
    INGOT_CHECK(pos < trie_.size(), ValueError,
                "[tokenizer] '{}': the Precompiled normalizer's precompiled_charsmap is corrupt "
                "(its trie refers to unit {} of {}); re-export the tokenizer.json",
                origin_, pos, trie_.size());
    return trie_[pos];
  }

  // The replacement of the shortest key that is a prefix of `chunk`, if any.
  std::optional<std::string_view> transform(std::string_view chunk) const {
    size_t pos = offset(unit(0));
    for (char ch : chunk) {
      auto c = static_cast<unsigned char>(ch);
      if (c == 0) break;
      pos ^= c;
      uint32_t u = unit(pos);
      if (label(u) != c) return std::nullopt;
      pos ^= offset(u);
      if (has_leaf(u)) {
        size_t begin = value(unit(pos));
        INGOT_CHECK(begin <= normalized_.size() &&
                        (begin == normalized_.size() ||
                         (static_cast<unsigned char>(normalized_[begin]) & 0xC0) != 0x80),
                    ValueError,
                    "[tokenizer] '{}': the Precompiled normalizer's precompiled_charsmap is "
                    "corrupt (a replacement starts at byte {} of {}); re-export the "
                    "tokenizer.json",
                    origin_, begin, normalized_.size());
        size_t stop = normalized_.find('\0', begin);
        if (stop == std::string::npos) stop = normalized_.size();
        return std::string_view(normalized_).substr(begin, stop - begin);
      }
    }
    return std::nullopt;
  }

  std::string origin_;
  std::vector<uint32_t> trie_;
  std::string normalized_;  // replacement strings, NUL-terminated
};

}  // namespace

std::unique_ptr<Normalizer> make_precompiled_normalizer(const JsonNode& node) {
  return std::make_unique<Precompiled>(node);
}

}  // namespace ingot::text::tokenizer
