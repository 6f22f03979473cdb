// The chat-template lexer: jinja2's lexing rules with trim_blocks and lstrip_blocks.
#include "ingot/text/chat/lexer.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

std::string located(const std::string& origin, int line, std::string_view message) {
  return fmt::format("[chat_template] '{}' line {}: {}", origin, line, message);
}

void fail(const std::string& origin, int line, std::string_view message) {
  throw ValueError(located(origin, line, message));
}

void fail_unsupported(const std::string& origin, int line, std::string_view message) {
  throw NotSupportedError(located(origin, line, message));
}

std::string describe(const Token& token) {
  switch (token.type) {
    case TokenType::Text:
      return "template data";
    case TokenType::VarBegin:
      return "begin of print statement '{{'";
    case TokenType::VarEnd:
      return "end of print statement '}}'";
    case TokenType::BlockBegin:
      return "begin of statement block '{%'";
    case TokenType::BlockEnd:
      return "end of statement block '%}'";
    case TokenType::Name:
    case TokenType::Operator:
      return "'" + token.value + "'";
    case TokenType::String:
      return "string literal";
    case TokenType::Integer:
    case TokenType::Float:
      return "number";
    case TokenType::End:
      return "end of template";
  }
  return "token";
}

namespace {

// "\r\n" and "\r" become "\n"; one trailing newline is dropped (keep_trailing_newline=False).
std::string normalise_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

class Lexer {
 public:
  Lexer(std::string source, const std::string& origin) : src_(std::move(source)), origin_(origin) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) lex_root();
    push(TokenType::End, "", src_.size());
    return std::move(tokens_);
  }

 private:
  // --- positions and lines ---
  int line_at(size_t offset) {
    if (offset < line_pos_) {  // only errors look back
      line_ = 1;
      line_pos_ = 0;
    }
    while (line_pos_ < offset && line_pos_ < src_.size()) {
      if (src_[line_pos_] == '\n') ++line_;
      ++line_pos_;
    }
    return line_;
  }
  [[noreturn]] void error(size_t offset, std::string_view message) {
    fail(origin_, line_at(offset), message);
  }
  void push(TokenType type, std::string value, size_t offset) {
    Token t{type, std::move(value), line_at(offset)};
    tokens_.push_back(std::move(t));
  }
  bool at(size_t p, std::string_view s) const {
    return p <= src_.size() && src_.compare(p, s.size(), s) == 0;
  }
  // Length of the run of Python whitespace (\s) at p.
  size_t space_run(size_t p) const {
    size_t q = p;
    while (q < src_.size()) {
      size_t next = q;
      if (!is_py_space(decode_utf8(src_, next))) break;
      q = next;
    }
    return q - p;
  }

  // --- template data and tag starts ---
  void lex_root() {
    size_t tag = src_.find('{', pos_);
    while (tag != std::string::npos && tag + 1 < src_.size() && src_[tag + 1] != '{' &&
           src_[tag + 1] != '%' && src_[tag + 1] != '#') {
      tag = src_.find('{', tag + 1);
    }
    if (tag == std::string::npos || tag + 1 >= src_.size()) {
      push_text(src_.substr(pos_), pos_);
      pos_ = src_.size();
      return;
    }
    char kind = src_[tag + 1];
    size_t after = tag + 2;
    char sign = after < src_.size() && (src_[after] == '-' || src_[after] == '+') ? src_[after] : 0;
    if (sign) ++after;
    std::string text = src_.substr(pos_, tag - pos_);
    size_t raw_body = 0;
    bool raw = kind == '%' && match_raw_begin(after, raw_body);
    strip_before(text, sign, kind != '{');
    push_text(std::move(text), pos_);
    line_starting_ = false;
    if (raw) {
      lex_raw(tag, raw_body);
    } else if (kind == '#') {
      lex_comment(tag, after);
    } else {
      push(kind == '{' ? TokenType::VarBegin : TokenType::BlockBegin, "", tag);
      pos_ = after;
      lex_tag(kind == '{', tag);
    }
  }

  void push_text(std::string text, size_t offset) {
    if (!text.empty()) push(TokenType::Text, std::move(text), offset);
  }

  // `-` strips all whitespace before the tag; otherwise lstrip_blocks removes the
  // indentation of a block or comment tag that starts its line.
  void strip_before(std::string& text, char sign, bool is_block) {
    if (sign == '-') {
      text = py_strip(text, std::nullopt, false, true);
    } else if (sign != '+' && is_block) {
      size_t line_start = text.rfind('\n');
      line_start = line_start == std::string::npos ? 0 : line_start + 1;
      if (line_start > 0 || line_starting_) {
        std::string_view rest = std::string_view(text).substr(line_start);
        if (!rest.empty() && py_strip(rest, std::nullopt, true, true).empty()) {
          text.resize(line_start);
        }
      }
    }
  }

  // After `%}` / `#}`: `-` eats the following whitespace, `+` nothing, else one "\n".
  size_t end_of_block(size_t after_close, char sign) {
    size_t p = after_close;
    if (sign == '-') {
      p += space_run(p);
    } else if (sign != '+' && p < src_.size() && src_[p] == '\n') {
      ++p;
    }
    line_starting_ = p > 0 && src_[p - 1] == '\n';
    return p;
  }

  // {% raw %} / {%- raw -%}: sets body_start past the tag.
  bool match_raw_begin(size_t p, size_t& body_start) {
    p += space_run(p);
    if (!at(p, "raw")) return false;
    p += 3;
    p += space_run(p);
    if (at(p, "-%}")) {
      p += 3;
      body_start = p + space_run(p);
      return true;
    }
    if (at(p, "%}")) {
      body_start = p + 2;
      return true;
    }
    return false;
  }

  void lex_raw(size_t tag, size_t body_start) {
    for (size_t p = src_.find("{%", body_start); p != std::string::npos;
         p = src_.find("{%", p + 1)) {
      size_t q = p + 2;
      char sign = q < src_.size() && (src_[q] == '-' || src_[q] == '+') ? src_[q] : 0;
      if (sign) ++q;
      q += space_run(q);
      if (!at(q, "endraw")) continue;
      q += 6;
      q += space_run(q);
      char close_sign = 0;
      if (at(q, "-%}") || at(q, "+%}")) {
        close_sign = src_[q];
        q += 3;
      } else if (at(q, "%}")) {
        q += 2;
      } else {
        continue;
      }
      std::string text = src_.substr(body_start, p - body_start);
      strip_before(text, sign, true);
      push_text(std::move(text), body_start);
      pos_ = end_of_block(q, close_sign);
      return;
    }
    error(tag, "missing end of raw directive ({% endraw %})");
  }

  void lex_comment(size_t tag, size_t p) {
    for (; p + 1 < src_.size(); ++p) {
      if ((src_[p] == '-' || src_[p] == '+') && at(p + 1, "#}")) {
        pos_ = end_of_block(p + 3, src_[p]);
        return;
      }
      if (at(p, "#}")) {
        pos_ = end_of_block(p + 2, 0);
        return;
      }
    }
    error(tag, "missing end of comment tag '#}'");
  }

  // --- inside {{ }} and {% %} ---
  void lex_tag(bool variable, size_t tag) {
    std::vector<char> brackets;
    while (true) {
      if (pos_ >= src_.size()) {
        error(tag, variable ? "unexpected end of template: '{{' is never closed with '}}'"
                            : "unexpected end of template: '{%' is never closed with '%}'");
      }
      if (brackets.empty() && lex_tag_end(variable)) return;
      size_t ws = space_run(pos_);
      if (ws) {
        pos_ += ws;
        continue;
      }
      char c = src_[pos_];
      if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        size_t start = pos_;
        while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
        push(TokenType::Name, src_.substr(start, pos_ - start), start);
      } else if (c == '\'' || c == '"') {
        lex_string();
      } else {
        lex_operator(brackets);
      }
    }
  }

  bool lex_tag_end(bool variable) {
    std::string_view close = variable ? "}}" : "%}";
    size_t start = pos_;
    char sign = 0;
    if ((src_[pos_] == '-' || (!variable && src_[pos_] == '+')) && at(pos_ + 1, close)) {
      sign = src_[pos_];
    } else if (!at(pos_, close)) {
      return false;
    }
    size_t after = pos_ + close.size() + (sign ? 1 : 0);
    push(variable ? TokenType::VarEnd : TokenType::BlockEnd, "", start);
    if (variable) {
      pos_ = sign == '-' ? after + space_run(after) : after;
      line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
    } else {
      pos_ = end_of_block(after, sign);
    }
    return true;
  }

  void lex_number() {
    size_t start = pos_;
    auto digits = [&](size_t p) {  // (\d+_)*\d+ ; returns the end or p when none
      size_t q = p;
      while (q < src_.size() && is_digit(src_[q])) {
        ++q;
        if (q + 1 < src_.size() && src_[q] == '_' && is_digit(src_[q + 1])) ++q;
      }
      return q;
    };
    bool after_dot = start > 0 && src_[start - 1] == '.';
    size_t int_end = digits(start);
    size_t p = int_end;
    bool is_float = false;
    if (!after_dot) {
      size_t frac = p;
      if (frac < src_.size() && src_[frac] == '.' && digits(frac + 1) > frac + 1) {
        frac = digits(frac + 1);
      }
      size_t exp = frac;
      if (exp < src_.size() && (src_[exp] == 'e' || src_[exp] == 'E')) {
        size_t q = exp + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        if (digits(q) > q) {
          p = digits(q);
          is_float = true;
        }
      }
      if (!is_float && frac > int_end) {
        p = frac;
        is_float = true;
      }
    }
    if (is_float) {
      std::string clean;
      for (size_t i = start; i < p; ++i) {
        if (src_[i] != '_') clean += src_[i];
      }
      Token t{TokenType::Float, clean, line_at(start)};
      t.float_value = std::strtod(clean.c_str(), nullptr);
      tokens_.push_back(std::move(t));
      pos_ = p;
      return;
    }
    lex_integer(start);
  }

  void lex_integer(size_t start) {
    int base = 10;
    size_t p = start;
    if (src_[p] == '0' && p + 1 < src_.size()) {
      char b = static_cast<char>(src_[p + 1] | 0x20);
      base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 10;
    }
    auto digit_value = [&](char c) {
      int v = is_digit(c)                              ? c - '0'
              : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                       : 99;
      return v < base ? v : -1;
    };
    int64_t value = 0;
    auto add_digit = [&](int d) {
      if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value)) {
        fail_unsupported(origin_, line_at(start),
                         "integer literal beyond the 64-bit range (Python's big integers are "
                         "not supported)");
      }
    };
    if (base != 10) {
      size_t q = p + 2;
      size_t first = q;
      while (q < src_.size()) {
        if (src_[q] == '_' && q + 1 < src_.size() && digit_value(src_[q + 1]) >= 0) ++q;
        if (digit_value(src_[q]) < 0) break;
        add_digit(digit_value(src_[q]));
        ++q;
      }
      if (q == first)
        base = 10;  // just "0", followed by a name
      else
        p = q;
    }
    if (base == 10) {
      if (src_[p] == '0') {
        // 0(_?0)*
        ++p;
        while (p < src_.size() &&
               (src_[p] == '0' || (src_[p] == '_' && p + 1 < src_.size() && src_[p + 1] == '0'))) {
          ++p;
        }
      } else {
        while (p < src_.size() && is_digit(src_[p])) {
          add_digit(src_[p] - '0');
          ++p;
          if (p + 1 < src_.size() && src_[p] == '_' && is_digit(src_[p + 1])) ++p;
        }
      }
    }
    Token t{TokenType::Integer, src_.substr(start, p - start), line_at(start)};
    t.integer_value = value;
    tokens_.push_back(std::move(t));
    pos_ = p;
  }

  // Python string literal escapes (jinja2 decodes with "unicode-escape").
  void lex_string() {
    size_t start = pos_;
    char quote = src_[pos_++];
    std::string value;
    auto hex = [&](size_t count, const char* what) {
      char32_t c = 0;
      for (size_t i = 0; i < count; ++i) {
        char h = pos_ < src_.size() ? src_[pos_] : 0;
        int d = is_digit(h)                              ? h - '0'
                : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10
                                                         : -1;
        if (d < 0) error(start, fmt::format("truncated \\{} escape in a string literal", what));
        c = c * 16 + static_cast<char32_t>(d);
        ++pos_;
      }
      if (c > 0x10FFFF) error(start, "escape beyond U+10FFFF in a string literal");
      append_utf8_char(value, c);
    };
    while (true) {
      if (pos_ >= src_.size()) error(start, "unterminated string literal");
      char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c != '\\') {
        value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) error(start, "unterminated string literal");
      char e = src_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
          value += '\\';
          break;
        case '\'':
          value += '\'';
          break;
        case '"':
          value += '"';
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        case 'v':
          value += '\v';
          break;
        case 'x':
          hex(2, "xXX");
          break;
        case 'u':
          hex(4, "uXXXX");
          break;
        case 'U':
          hex(8, "UXXXXXXXX");
          break;
        case 'N':
          fail_unsupported(origin_, line_at(start), "\\N{...} escapes in string literals");
        default:
          if (e >= '0' && e <= '7') {
            char32_t o = static_cast<char32_t>(e - '0');
            for (int i = 0; i < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7';
                 ++i) {
              o = o * 8 + static_cast<char32_t>(src_[pos_++] - '0');
            }
            append_utf8_char(value, o);
          } else {
            value += '\\';  // unknown escapes keep their backslash
            value += e;
          }
      }
    }
    push(TokenType::String, std::move(value), start);
  }

  void lex_operator(std::vector<char>& brackets) {
    static constexpr std::string_view two[] = {"//", "**", "==", "!=", ">=", "<="};
    for (std::string_view op : two) {
      if (at(pos_, op)) {
        push(TokenType::Operator, std::string(op), pos_);
        pos_ += 2;
        return;
      }
    }
    char c = src_[pos_];
    static constexpr std::string_view one = "+-/*%~[](){}><=.:|,;";
    if (one.find(c) == std::string_view::npos) {
      size_t next = pos_;
      char32_t cp = decode_utf8(src_, next);
      error(pos_, cp < 0x80 ? fmt::format("unexpected character '{}'", c)
                            : fmt::format("unexpected character U+{:04X} (only ASCII names are "
                                          "supported)",
                                          static_cast<unsigned>(cp)));
    }
    if (c == '(' || c == '[' || c == '{') {
      brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets.empty()) error(pos_, fmt::format("unexpected '{}'", c));
      if (brackets.back() != c) {
        error(pos_, fmt::format("unexpected '{}', expected '{}'", c, brackets.back()));
      }
      brackets.pop_back();
    }
    push(TokenType::Operator, std::string(1, c), pos_);
    ++pos_;
  }

  std::string src_;
  const std::string& origin_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  int line_ = 1;
  size_t line_pos_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& origin) {
  return Lexer(normalise_newlines(source), origin).run();
}

}  // namespace ingot::text::chat
