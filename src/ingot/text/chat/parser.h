// Builds the syntax tree of a chat template from its tokens, following jinja2's grammar
// (jinja2/parser.py): statements if / for / set / macro / filter / with / break /
// continue / generation, and expressions with jinja2's precedence
//   a if c else b  <  or  <  and  <  not  <  comparisons (chained, in, not in)
//   <  + -  <  ~  <  * / // %  <  **  <  unary - +  <  postfix (.x [i] [a:b] (..) | is).
//
// A syntax error is a ValueError naming the origin, line and what was found; a jinja2
// tag the engine does not implement (call, include, import, extends, block, ...) is a
// NotSupportedError naming it. Input nested deeper than kMaxNesting is a ValueError.
#pragma once

#include <string>
#include <vector>

#include "ingot/text/chat/ast.h"
#include "ingot/text/chat/lexer.h"

namespace ingot::text::chat {

Body parse_template(const std::vector<Token>& tokens, const std::string& origin);

}  // namespace ingot::text::chat
