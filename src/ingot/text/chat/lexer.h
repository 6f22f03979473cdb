// Splits a chat template into tokens the way jinja2's lexer does under transformers'
// settings (trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False):
// template text, {{ }} / {% %} delimiters, and inside them names, literals and operators.
//
// Whitespace control is applied here: `{%-` / `{{-` / `{#-` strip the whitespace before
// the tag, `-%}` / `-}}` / `-#}` the whitespace after it, `+` turns off lstrip_blocks
// (before) or trim_blocks (after). Comments and {% raw %} blocks are resolved here too.
// Newlines are normalised to "\n" and one trailing newline of the source is dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::text::chat {

enum class TokenType {
  Text,        // template data, printed as is
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,    // value: the unescaped text
  Integer,   // integer_value
  Float,     // float_value
  Operator,  // value: the operator text ("+", "//", "(", ...)
  End,       // end of template
};

struct Token {
  TokenType type;
  std::string value;
  int line = 1;
  int64_t integer_value = 0;
  double float_value = 0.0;
};

// Tokens of `source` ending with an End token. ValueError naming origin and line for a
// malformed template (unterminated tag, comment or string, unbalanced brackets, a
// character that starts no token); NotSupportedError for an integer literal beyond int64.
std::vector<Token> tokenize(std::string_view source, const std::string& origin);

// "end of print statement" etc.: how an error message names a token.
std::string describe(const Token& token);

}  // namespace ingot::text::chat
