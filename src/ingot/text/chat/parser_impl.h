// The chat-template parser, shared by parser.cpp (statements) and
// expression_parser.cpp (expressions); internal to models/chat.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/text/chat/ast.h"
#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/lexer.h"

namespace ingot::text::chat {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& origin)
      : tokens_(tokens), origin_(origin) {}

  Body run() {
    std::string end;
    Body body = parse_body({}, end);
    return body;
  }

 private:
  // --- token stream ---
  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(size_t n = 1) const { return tokens_[std::min(pos_ + n, tokens_.size() - 1)]; }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view op) const {
    return cur().type == TokenType::Operator && cur().value == op;
  }
  bool is_name(std::string_view name) const {
    return cur().type == TokenType::Name && cur().value == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  [[noreturn]] void error(const Token& at, std::string_view message) {
    fail(origin_, at.line, message);
  }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) error(cur(), fmt::format("expected '{}', got {}", op, describe(cur())));
  }
  std::string expect_name(std::string_view what) {
    if (cur().type != TokenType::Name) {
      error(cur(), fmt::format("expected {}, got {}", what, describe(cur())));
    }
    return advance().value;
  }
  void expect_block_end(std::string_view tag) {
    if (cur().type != TokenType::BlockEnd) {
      error(cur(),
            fmt::format("expected the end of the '{}' tag '%}}', got {}", tag, describe(cur())));
    }
    advance();
  }

  // Guards recursion: nested brackets, unary chains, statement nesting.
  struct Nest {
    Parser& p;
    Nest(Parser& parser, const Token& at) : p(parser) {
      if (++p.nesting_ > kMaxNesting) {
        p.error(at, fmt::format("the template nests deeper than {} levels", kMaxNesting));
      }
    }
    ~Nest() { --p.nesting_; }
  };

  ExprPtr node(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }
  // Sets the depth from the children; rejects trees deeper than kMaxNesting (left-
  // associative chains such as a + b + c ... grow deep without recursion here).
  ExprPtr finish(ExprPtr e) {
    int depth = 0;
    for (const auto& a : e->args) {
      if (a) depth = std::max(depth, a->depth);
    }
    for (const auto& [k, a] : e->kwargs) depth = std::max(depth, a->depth);
    e->depth = depth + 1;
    if (e->depth > kMaxNesting) {
      fail(origin_, e->line,
           fmt::format("the expression nests deeper than {} levels", kMaxNesting));
    }
    return e;
  }
  ExprPtr unary(ExprKind kind, int line, ExprPtr a) {
    auto e = node(kind, line);
    e->args.push_back(std::move(a));
    return finish(std::move(e));
  }
  ExprPtr binary(ExprKind kind, int line, ExprPtr a, ExprPtr b, std::string name = "") {
    auto e = node(kind, line);
    e->name = std::move(name);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return finish(std::move(e));
  }

  // --- statements (parser.cpp) ---
  // --- statements ---
  // Parses until `{% <one of ends> %}` (consuming '{%' and the end name, which is
  // returned in `end`) or the end of the template when `ends` is empty.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& end);
  std::unique_ptr<Stmt> parse_statement(std::initializer_list<std::string_view> ends);
  Body body_until(std::string_view end_tag);
  void parse_if(Stmt& s);
  Target parse_target(bool with_namespace, std::string_view stop_name);
  void parse_for(Stmt& s);
  void parse_set(Stmt& s);
  void parse_macro(Stmt& s);
  void parse_with(Stmt& s);

  // --- expressions (expression_parser.cpp) ---
  // --- expressions ---
  bool is_tuple_end(std::initializer_list<std::string_view> extra) const;
  ExprPtr parse_tuple(bool explicit_parens, bool with_condexpr,
                      std::initializer_list<std::string_view> extra);
  ExprPtr parse_expression(bool with_condexpr);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr literal(Value v, int line);
  ExprPtr parse_list();
  ExprPtr parse_dict();
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_filter_expr(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr obj);
  // (positional..., name=value...) into e->args (after args[0]) and e->kwargs.
  void parse_call_args(Expr& e);
  ExprPtr parse_call(ExprPtr callee);
  std::string dotted_name(std::string_view what);
  // `| name(args) | name ...`; `start_inline` when the first filter has no '|'
  // (filter blocks). Each Filter's args[0] is left null for the caller to fill.
  std::vector<ExprPtr> parse_filter_chain(bool start_inline);
  ExprPtr parse_test(ExprPtr operand);

  const std::vector<Token>& tokens_;
  const std::string& origin_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int loops_ = 0;
  std::vector<std::pair<std::string, int>> open_;  // statement tags being parsed, for errors
};

}  // namespace ingot::text::chat
