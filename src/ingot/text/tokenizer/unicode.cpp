#include "ingot/text/tokenizer/unicode.h"

#include <algorithm>
#include <span>
#include <vector>

#include "ingot/text/tokenizer/unicode_tables.h"

namespace ingot::text::tokenizer {

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

namespace {

// Length of the valid UTF-8 sequence at bytes[pos], or 0 when invalid; `valid_prefix` is
// set to the number of leading bytes that could still start a valid sequence (the
// "maximal subpart" that from_utf8_lossy replaces by a single U+FFFD).
size_t utf8_valid_length(std::string_view bytes, size_t pos, size_t& valid_prefix) {
  auto at = [&](size_t i) -> int {
    return pos + i < bytes.size() ? static_cast<unsigned char>(bytes[pos + i]) : -1;
  };
  int b0 = at(0);
  valid_prefix = 1;
  if (b0 < 0x80) return 1;
  int need;
  int lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int i = 1; i <= need; ++i) {
    int b = at(i);
    int l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
    valid_prefix = static_cast<size_t>(i) + 1;
  }
  return static_cast<size_t>(need) + 1;
}

bool in_ranges(std::span<const tables::CodeRange> ranges, char32_t c) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), c,
                             [](char32_t v, const tables::CodeRange& r) { return v < r.first; });
  return it != ranges.begin() && c <= std::prev(it)->last;
}

// Index over a flat mapping table: code point -> position of its record.
class MappingIndex {
 public:
  explicit MappingIndex(std::span<const char32_t> flat) : flat_(flat) {
    for (size_t i = 0; i < flat.size(); i += 2 + flat[i + 1]) entries_.push_back({flat[i], i});
  }
  // The mapped code points of c, or an empty span when c maps to itself.
  std::span<const char32_t> find(char32_t c) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), c,
                               [](const Entry& e, char32_t v) { return e.code_point < v; });
    if (it == entries_.end() || it->code_point != c) return {};
    return flat_.subspan(it->offset + 2, flat_[it->offset + 1]);
  }

 private:
  struct Entry {
    char32_t code_point;
    size_t offset;
  };
  std::span<const char32_t> flat_;
  std::vector<Entry> entries_;
};

const MappingIndex& lowercase_index() {
  static const MappingIndex index(tables::lowercase);
  return index;
}
const MappingIndex& nfd_index() {
  static const MappingIndex index(tables::nfd);
  return index;
}
const MappingIndex& nfkd_index() {
  static const MappingIndex index(tables::nfkd);
  return index;
}

constexpr char32_t kHangulBase = 0xAC00, kHangulLBase = 0x1100, kHangulVBase = 0x1161,
                   kHangulTBase = 0x11A7;
constexpr char32_t kHangulLCount = 19, kHangulVCount = 21, kHangulTCount = 28;
constexpr char32_t kHangulNCount = kHangulVCount * kHangulTCount;
constexpr char32_t kHangulSCount = kHangulLCount * kHangulNCount;

uint8_t combining_class(char32_t c) {
  if (c < 0x300) return 0;
  const auto& ranges = tables::combining_class;
  auto it = std::upper_bound(
      ranges.begin(), ranges.end(), c,
      [](char32_t v, const tables::CombiningClassRange& r) { return v < r.first; });
  if (it == ranges.begin() || c > std::prev(it)->last) return 0;
  return std::prev(it)->combining_class;
}

void decompose(char32_t c, bool compatibility, std::vector<char32_t>& out) {
  if (c >= kHangulBase && c < kHangulBase + kHangulSCount) {
    char32_t s = c - kHangulBase;
    out.push_back(kHangulLBase + s / kHangulNCount);
    out.push_back(kHangulVBase + (s % kHangulNCount) / kHangulTCount);
    if (s % kHangulTCount != 0) out.push_back(kHangulTBase + s % kHangulTCount);
    return;
  }
  if (compatibility) {
    auto m = nfkd_index().find(c);
    if (!m.empty()) {
      out.insert(out.end(), m.begin(), m.end());
      return;
    }
  }
  auto m = nfd_index().find(c);
  if (!m.empty()) {
    out.insert(out.end(), m.begin(), m.end());
  } else {
    out.push_back(c);
  }
}

// 0 when the pair has no primary composite.
char32_t compose_pair(char32_t a, char32_t b) {
  if (a >= kHangulLBase && a < kHangulLBase + kHangulLCount && b >= kHangulVBase &&
      b < kHangulVBase + kHangulVCount) {
    return kHangulBase + ((a - kHangulLBase) * kHangulVCount + (b - kHangulVBase)) * kHangulTCount;
  }
  if (a >= kHangulBase && a < kHangulBase + kHangulSCount &&
      (a - kHangulBase) % kHangulTCount == 0 && b > kHangulTBase &&
      b < kHangulTBase + kHangulTCount) {
    return a + (b - kHangulTBase);
  }
  const auto& comps = tables::compositions;
  auto it = std::lower_bound(comps.begin(), comps.end(), std::pair{a, b},
                             [](const tables::Composition& e, std::pair<char32_t, char32_t> v) {
                               return e.first != v.first ? e.first < v.first : e.second < v.second;
                             });
  if (it != comps.end() && it->first == a && it->second == b) return it->composite;
  return 0;
}

// Canonical ordering: stable sort of every run of non-starters by combining class.
void canonical_order(std::vector<char32_t>& chars) {
  size_t i = 0;
  while (i < chars.size()) {
    if (combining_class(chars[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < chars.size() && combining_class(chars[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(chars.begin() + i, chars.begin() + j, [](char32_t a, char32_t b) {
        return combining_class(a) < combining_class(b);
      });
    }
    i = j;
  }
}

// Canonical composition (UAX #15) in place.
void compose(std::vector<char32_t>& chars) {
  if (chars.empty()) return;
  size_t starter = 0;
  int last_class = combining_class(chars[0]) == 0 ? 0 : 256;
  size_t out = 1;
  for (size_t i = 1; i < chars.size(); ++i) {
    char32_t c = chars[i];
    int cls = combining_class(c);
    char32_t composite = compose_pair(chars[starter], c);
    if (composite != 0 && (last_class < cls || last_class == 0)) {
      chars[starter] = composite;
      continue;
    }
    if (cls == 0) starter = out;
    last_class = cls;
    chars[out++] = c;
  }
  chars.resize(out);
}

}  // namespace

size_t find_invalid_utf8(std::string_view bytes) {
  size_t pos = 0, prefix = 0;
  while (pos < bytes.size()) {
    if (static_cast<unsigned char>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t n = utf8_valid_length(bytes, pos, prefix);
    if (n == 0) return pos;
    pos += n;
  }
  return std::string_view::npos;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0, prefix = 0;
  while (pos < bytes.size()) {
    size_t n = utf8_valid_length(bytes, pos, prefix);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      pos += prefix;
    } else {
      out.append(bytes.substr(pos, n));
      pos += n;
    }
  }
  return out;
}

bool is_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return in_ranges(tables::whitespace, c);
}
bool is_bert_removed(char32_t c) {
  return in_ranges(tables::bert_removed, c);
}
bool is_punctuation(char32_t c) {
  return in_ranges(tables::punctuation, c);
}
bool is_nonspacing_mark(char32_t c) {
  return c >= 0x300 && in_ranges(tables::nonspacing_mark, c);
}
bool is_combining_mark(char32_t c) {
  return c >= 0x300 && in_ranges(tables::combining_mark, c);
}
bool is_numeric(char32_t c) {
  return in_ranges(tables::numeric, c);
}
bool is_word_char(char32_t c) {
  if (c < 0x80) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  return in_ranges(tables::word, c);
}

bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void append_lowercase(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
    return;
  }
  auto m = lowercase_index().find(c);
  if (m.empty()) {
    append_utf8(out, c);
  } else {
    for (char32_t x : m) append_utf8(out, x);
  }
}

std::string unicode_normalize(std::string_view text, NormalForm form) {
  // ASCII is invariant under every normal form.
  if (std::all_of(text.begin(), text.end(), [](char ch) { return (ch & 0x80) == 0; })) {
    return std::string(text);
  }
  bool compat = form == NormalForm::NFKD || form == NormalForm::NFKC;
  std::vector<char32_t> chars;
  chars.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) decompose(next_code_point(text, pos), compat, chars);
  canonical_order(chars);
  if (form == NormalForm::NFC || form == NormalForm::NFKC) compose(chars);
  std::string out;
  out.reserve(text.size());
  for (char32_t c : chars) append_utf8(out, c);
  return out;
}

}  // namespace ingot::text::tokenizer
