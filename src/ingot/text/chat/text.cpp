// Python str semantics over UTF-8 for the chat-template engine.
#include "ingot/text/chat/text.h"

#include <algorithm>
#include <unordered_map>

#include "ingot/text/tokenizer/unicode.h"
#include "ingot/text/tokenizer/unicode_tables.h"

namespace ingot::text::chat {

char32_t decode_utf8(std::string_view text, size_t& pos) {
  auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  size_t len = b0 >= 0xF0 && b0 < 0xF5 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (len == 0 || pos + len > text.size()) {
    ++pos;
    return 0xFFFD;
  }
  char32_t c = b0 & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < len; ++i) {
    auto b = static_cast<unsigned char>(text[pos + i]);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return 0xFFFD;
    }
    c = (c << 6) | (b & 0x3F);
  }
  pos += len;
  return c;
}

void append_utf8_char(std::string& out, char32_t c) {
  tokenizer::append_utf8(out, c);
}

size_t find_invalid_utf8(std::string_view text) {
  return tokenizer::find_invalid_utf8(text);
}

bool is_py_space(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_printable(char32_t c) {
  // Python's str.isprintable is false for the categories Cc, Cf, Cs, Co, Cn, Zl, Zp and
  // Zs (except space). Approximated by the control and format characters and the
  // separators that occur in text; unassigned code points count as printable here.
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD) return false;
  if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F)) return false;
  if ((c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x206F) || c == 0x3000) return false;
  if (c == 0xFEFF || (c >= 0xD800 && c <= 0xDFFF) || (c >= 0xE000 && c <= 0xF8FF)) return false;
  return c <= 0x10FFFF;
}

std::vector<size_t> code_point_offsets(std::string_view text) {
  std::vector<size_t> offsets;
  offsets.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size();) {
    offsets.push_back(pos);
    decode_utf8(text, pos);
  }
  offsets.push_back(text.size());
  return offsets;
}

size_t code_point_count(std::string_view text) {
  size_t n = 0;
  for (size_t pos = 0; pos < text.size(); ++n) decode_utf8(text, pos);
  return n;
}

namespace {

std::vector<char32_t> decode_all(std::string_view text) {
  std::vector<char32_t> out;
  for (size_t pos = 0; pos < text.size();) out.push_back(decode_utf8(text, pos));
  return out;
}

}  // namespace

std::string py_strip(std::string_view text, const std::optional<std::string>& chars, bool left,
                     bool right) {
  std::vector<char32_t> set;
  if (chars) set = decode_all(*chars);
  auto strip_it = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_py_space(c);
  };
  std::vector<size_t> offsets = code_point_offsets(text);
  size_t n = offsets.size() - 1;
  size_t begin = 0, end = n;
  auto at = [&](size_t i) {
    size_t pos = offsets[i];
    return decode_utf8(text, pos);
  };
  if (left) {
    while (begin < end && strip_it(at(begin))) ++begin;
  }
  if (right) {
    while (end > begin && strip_it(at(end - 1))) --end;
  }
  return std::string(text.substr(offsets[begin], offsets[end] - offsets[begin]));
}

std::vector<std::string> py_split(std::string_view text, const std::optional<std::string>& sep,
                                  int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      size_t hit = text.find(*sep, start);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(text.substr(start, hit - start));
      start = hit + sep->size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
  }
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < text.size()) {
      size_t next = pos;
      if (!is_py_space(decode_utf8(text, next))) break;
      pos = next;
    }
  };
  skip_space();
  while (pos < text.size()) {
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.emplace_back(text.substr(pos));  // the rest, as is
      return parts;
    }
    size_t start = pos;
    while (pos < text.size()) {
      size_t next = pos;
      if (is_py_space(decode_utf8(text, next))) break;
      pos = next;
    }
    parts.emplace_back(text.substr(start, pos - start));
    skip_space();
  }
  return parts;
}

std::vector<std::string> py_rsplit(std::string_view text, const std::optional<std::string>& sep,
                                   int64_t maxsplit) {
  if (maxsplit < 0) return py_split(text, sep, maxsplit);
  std::vector<std::string> parts;
  if (sep) {
    size_t end = text.size();
    while (static_cast<int64_t>(parts.size()) < maxsplit && end >= sep->size()) {
      size_t hit = text.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      parts.emplace_back(text.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    parts.emplace_back(text.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  std::vector<size_t> offsets = code_point_offsets(text);
  auto space_at = [&](size_t i) {
    size_t pos = offsets[i];
    return is_py_space(decode_utf8(text, pos));
  };
  size_t i = offsets.size() - 1;
  while (i > 0 && space_at(i - 1)) --i;
  while (i > 0) {
    if (static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.emplace_back(text.substr(0, offsets[i]));
      break;
    }
    size_t end = i;
    while (i > 0 && !space_at(i - 1)) --i;
    parts.emplace_back(text.substr(offsets[i], offsets[end] - offsets[i]));
    while (i > 0 && space_at(i - 1)) --i;
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string py_replace(std::string_view text, std::string_view old, std::string_view with,
                       int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts `with` before every code point and at the end.
    std::vector<size_t> offsets = code_point_offsets(text);
    int64_t done = 0;
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (count < 0 || done < count) {
        out += with;
        ++done;
      }
      out += text.substr(offsets[i], offsets[i + 1] - offsets[i]);
    }
    if (count < 0 || done < count) out += with;
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = text.find(old, start);
    if (hit == std::string_view::npos) break;
    out += text.substr(start, hit - start);
    out += with;
    start = hit + old.size();
    ++done;
  }
  out += text.substr(start);
  return out;
}

namespace {

// Upper case as the inverse of the single-code-point lowercase mappings (the smallest
// code point wins: 'K' over the Kelvin sign). Full mappings such as ß -> SS are not made.
const std::unordered_map<char32_t, char32_t>& uppercase_map() {
  static const std::unordered_map<char32_t, char32_t> map = [] {
    std::unordered_map<char32_t, char32_t> m;
    auto table = tokenizer::tables::lowercase;
    for (size_t i = 0; i + 1 < table.size();) {
      char32_t upper = table[i];
      size_t n = table[i + 1];
      if (n == 1 && i + 2 < table.size()) {
        char32_t lower = table[i + 2];
        auto it = m.find(lower);
        if (it == m.end() || upper < it->second) m[lower] = upper;
      }
      i += 2 + n;
    }
    return m;
  }();
  return map;
}

void append_upper(std::string& out, char32_t c) {
  if (c == 0xDF) {  // ß: the one full uppercase mapping of Latin-1
    out += "SS";
    return;
  }
  if (c < 0x80) {
    out.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c));
    return;
  }
  auto it = uppercase_map().find(c);
  append_utf8_char(out, it == uppercase_map().end() ? c : it->second);
}

void append_lower(std::string& out, char32_t c) {
  if (c >= 0xD800 && c <= 0xDFFF) {
    append_utf8_char(out, 0xFFFD);
    return;
  }
  tokenizer::append_lowercase(out, c);
}

bool is_cased(char32_t c) {
  std::string a, b;
  append_lower(a, c);
  append_upper(b, c);
  return a != b;
}

}  // namespace

std::string py_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) append_lower(out, decode_utf8(text, pos));
  return out;
}

std::string py_upper(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) append_upper(out, decode_utf8(text, pos));
  return out;
}

std::string py_capitalize(std::string_view text) {
  // Python title-cases the first character (ß -> Ss), then lowers the rest.
  std::string out;
  size_t pos = 0;
  if (pos < text.size()) {
    char32_t c = decode_utf8(text, pos);
    if (c == 0xDF) {
      out += "Ss";
    } else {
      append_upper(out, c);
    }
  }
  while (pos < text.size()) append_lower(out, decode_utf8(text, pos));
  return out;
}

std::string py_title(std::string_view text) {
  std::string out;
  bool previous_cased = false;
  for (size_t pos = 0; pos < text.size();) {
    char32_t c = decode_utf8(text, pos);
    if (previous_cased) {
      append_lower(out, c);
    } else {
      append_upper(out, c);
    }
    previous_cased = is_cased(c);
  }
  return out;
}

std::string jinja_title(std::string_view text) {
  // jinja2 splits at runs of [-\s({[<] (keeping them) and capitalises every piece.
  auto is_break = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || is_py_space(c);
  };
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t start = pos;
    size_t probe = pos;
    bool breaking = is_break(decode_utf8(text, probe));
    while (pos < text.size()) {
      size_t next = pos;
      if (is_break(decode_utf8(text, next)) != breaking) break;
      pos = next;
    }
    // item[0].upper() + item[1:].lower()
    std::string_view piece = text.substr(start, pos - start);
    size_t first = 0;
    append_upper(out, decode_utf8(piece, first));
    out += py_lower(piece.substr(first));
  }
  return out;
}

}  // namespace ingot::text::chat
