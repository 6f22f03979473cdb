// Recursive-descent parser for the chat-template engine: statements (jinja2's grammar).
#include "ingot/text/chat/parser.h"

#include "ingot/text/chat/parser_impl.h"

namespace ingot::text::chat {

// --- statements ---
// Parses until `{% <one of ends> %}` (consuming '{%' and the end name, which is
// returned in `end`) or the end of the template when `ends` is empty.
Body Parser::parse_body(std::initializer_list<std::string_view> ends, std::string& end) {
  Body body;
  while (true) {
    const Token& t = cur();
    if (t.type == TokenType::End) {
      if (ends.size() == 0) return body;
      std::string wanted;
      for (auto e : ends) wanted += (wanted.empty() ? "" : " or ") + fmt::format("'{}'", e);
      std::string open = open_.empty() ? std::string("a block")
                                       : fmt::format("the '{{% {} %}}' on line {}",
                                                     open_.back().first, open_.back().second);
      error(t, fmt::format("unexpected end of template: {} is never closed (expected {})", open,
                           wanted));
    }
    if (t.type == TokenType::Text) {
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::Text;
      s->line = t.line;
      s->text = t.value;
      body.push_back(std::move(s));
      advance();
      continue;
    }
    if (t.type == TokenType::VarBegin) {
      advance();
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::Output;
      s->line = t.line;
      s->exprs.push_back(parse_tuple(false, true, {}));
      if (cur().type != TokenType::VarEnd) {
        error(cur(), fmt::format("expected the end of the print statement '}}}}', got {}",
                                 describe(cur())));
      }
      advance();
      body.push_back(std::move(s));
      continue;
    }
    if (t.type != TokenType::BlockBegin) error(t, fmt::format("unexpected {}", describe(t)));
    const Token& tag = peek();
    if (tag.type == TokenType::Name &&
        std::find(ends.begin(), ends.end(), tag.value) != ends.end()) {
      advance();
      end = advance().value;
      return body;
    }
    advance();
    body.push_back(parse_statement(ends));
  }
}

std::unique_ptr<Stmt> Parser::parse_statement(std::initializer_list<std::string_view> ends) {
  const Token& t = cur();
  if (t.type != TokenType::Name) error(t, fmt::format("expected a tag name, got {}", describe(t)));
  Nest nest(*this, t);
  open_.emplace_back(t.value, t.line);
  auto s = std::make_unique<Stmt>();
  s->line = t.line;
  std::string tag = advance().value;
  if (tag == "if") {
    parse_if(*s);
  } else if (tag == "for") {
    parse_for(*s);
  } else if (tag == "set") {
    parse_set(*s);
  } else if (tag == "macro") {
    parse_macro(*s);
  } else if (tag == "filter") {
    s->kind = StmtKind::FilterBlock;
    s->filters = parse_filter_chain(true);
    expect_block_end(tag);
    s->bodies.push_back(body_until("endfilter"));
  } else if (tag == "with") {
    parse_with(*s);
  } else if (tag == "generation") {
    s->kind = StmtKind::Generation;
    expect_block_end(tag);
    s->bodies.push_back(body_until("endgeneration"));
  } else if (tag == "break" || tag == "continue") {
    if (loops_ == 0) error(t, fmt::format("'{}' outside of a for loop", tag));
    s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
    expect_block_end(tag);
  } else if (tag == "call" || tag == "include" || tag == "import" || tag == "from" ||
             tag == "extends" || tag == "block" || tag == "do" || tag == "autoescape" ||
             tag == "trans" || tag == "print") {
    fail_unsupported(origin_, t.line,
                     fmt::format("the '{{% {} %}}' tag is not supported by ingot's chat-template "
                                 "engine (see docs/chat_templates.md)",
                                 tag));
  } else {
    std::string wanted;
    for (auto e : ends) wanted += (wanted.empty() ? "" : ", ") + std::string(e);
    bool closing = tag.rfind("end", 0) == 0 || tag == "elif" || tag == "else";
    if (!closing) error(t, fmt::format("unknown tag '{}'", tag));
    error(t, wanted.empty()
                 ? fmt::format("unexpected '{{% {} %}}': no block is open", tag)
                 : fmt::format("unexpected '{{% {} %}}': the innermost open block expects {}", tag,
                               wanted));
  }
  open_.pop_back();
  return s;
}

Body Parser::body_until(std::string_view end_tag) {
  std::string end;
  Body b = parse_body({end_tag}, end);
  expect_block_end(end_tag);
  return b;
}

void Parser::parse_if(Stmt& s) {
  s.kind = StmtKind::If;
  while (true) {
    s.exprs.push_back(parse_tuple(false, false, {}));
    expect_block_end("if");
    std::string end;
    s.bodies.push_back(parse_body({"elif", "else", "endif"}, end));
    if (end == "elif") continue;
    if (end == "else") {
      expect_block_end("else");
      s.has_else = true;
      s.bodies.push_back(body_until("endif"));
      return;
    }
    expect_block_end("endif");
    return;
  }
}

Target Parser::parse_target(bool with_namespace, std::string_view stop_name) {
  Target target;
  while (true) {
    const Token& t = cur();
    if (t.type != TokenType::Name || t.value == "true" || t.value == "false" || t.value == "none" ||
        t.value == "True" || t.value == "False" || t.value == "None") {
      if (is_op("(")) {
        fail_unsupported(origin_, t.line, "nested tuple unpacking in an assignment target");
      }
      error(t, fmt::format("can't assign to {}", describe(t)));
    }
    target.names.push_back(advance().value);
    if (with_namespace && target.names.size() == 1 && is_op(".")) {
      advance();
      target.attribute = expect_name("an attribute name after '.'");
      return target;
    }
    if (!is_op(",")) return target;
    advance();
    target.unpack = true;
    if (cur().type == TokenType::BlockEnd || is_op("=") || is_name(stop_name)) return target;
  }
}

void Parser::parse_for(Stmt& s) {
  s.kind = StmtKind::For;
  s.target = parse_target(false, "in");
  if (!skip_name("in")) error(cur(), fmt::format("expected 'in', got {}", describe(cur())));
  s.exprs.push_back(parse_tuple(false, false, {"recursive"}));
  if (skip_name("if")) {
    s.exprs.push_back(parse_expression(true));
  }
  if (is_name("recursive")) fail_unsupported(origin_, cur().line, "recursive for loops");
  expect_block_end("for");
  ++loops_;
  std::string end;
  s.bodies.push_back(parse_body({"endfor", "else"}, end));
  --loops_;
  if (end == "else") {
    expect_block_end("else");
    s.has_else = true;
    s.bodies.push_back(body_until("endfor"));
  } else {
    expect_block_end("endfor");
  }
}

void Parser::parse_set(Stmt& s) {
  s.target = parse_target(true, "");
  if (skip_op("=")) {
    s.kind = StmtKind::Set;
    s.exprs.push_back(parse_tuple(false, true, {}));
    expect_block_end("set");
    return;
  }
  if (s.target.unpack || !s.target.attribute.empty()) {
    error(cur(), fmt::format("expected '=' in the 'set' tag, got {}", describe(cur())));
  }
  s.kind = StmtKind::SetBlock;
  if (is_op("|")) s.filters = parse_filter_chain(false);
  expect_block_end("set");
  int loops = loops_;
  loops_ = 0;
  s.bodies.push_back(body_until("endset"));
  loops_ = loops;
}

void Parser::parse_macro(Stmt& s) {
  s.kind = StmtKind::Macro;
  s.text = expect_name("a macro name");
  expect_op("(");
  while (!is_op(")")) {
    if (!s.params.empty()) expect_op(",");
    if (is_op(")")) break;
    s.params.push_back(expect_name("a parameter name"));
    if (skip_op("=")) {
      s.defaults.push_back(parse_expression(true));
    } else {
      if (!s.defaults.empty() && s.defaults.back()) {
        error(cur(), "non-default argument follows default argument");
      }
      s.defaults.push_back(nullptr);
    }
  }
  advance();
  expect_block_end("macro");
  int loops = loops_;
  loops_ = 0;
  s.bodies.push_back(body_until("endmacro"));
  loops_ = loops;
}

void Parser::parse_with(Stmt& s) {
  s.kind = StmtKind::With;
  while (cur().type != TokenType::BlockEnd) {
    if (!s.params.empty()) expect_op(",");
    s.params.push_back(expect_name("a variable name"));
    expect_op("=");
    s.exprs.push_back(parse_expression(true));
  }
  expect_block_end("with");
  s.bodies.push_back(body_until("endwith"));
}

Body parse_template(const std::vector<Token>& tokens, const std::string& origin) {
  return Parser(tokens, origin).run();
}

}  // namespace ingot::text::chat
