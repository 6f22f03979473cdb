// Recursive-descent parser for the chat-template engine: expressions, with jinja2's
// precedence (see parser.h).
#include "ingot/text/chat/parser_impl.h"

namespace ingot::text::chat {

// --- expressions ---
bool Parser::is_tuple_end(std::initializer_list<std::string_view> extra) const {
  TokenType t = cur().type;
  if (t == TokenType::VarEnd || t == TokenType::BlockEnd || t == TokenType::End || is_op(")")) {
    return true;
  }
  return cur().type == TokenType::Name &&
         std::find(extra.begin(), extra.end(), cur().value) != extra.end();
}

ExprPtr Parser::parse_tuple(bool explicit_parens, bool with_condexpr,
                            std::initializer_list<std::string_view> extra) {
  int line = cur().line;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (is_tuple_end(extra)) break;
    items.push_back(parse_expression(with_condexpr));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) {
      error(cur(), fmt::format("expected an expression, got {}", describe(cur())));
    }
  }
  auto e = node(ExprKind::Tuple, line);
  e->args = std::move(items);
  return finish(std::move(e));
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  Nest nest(*this, cur());
  if (!with_condexpr) return parse_or();
  ExprPtr e = parse_or();
  while (is_name("if")) {
    int line = advance().line;
    ExprPtr cond = parse_or();
    ExprPtr otherwise;
    if (skip_name("else")) otherwise = parse_expression(true);
    auto c = node(ExprKind::CondExpr, line);
    c->args.push_back(std::move(e));
    c->args.push_back(std::move(cond));
    c->args.push_back(std::move(otherwise));
    e = finish(std::move(c));
  }
  return e;
}

ExprPtr Parser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    int line = advance().line;
    left = binary(ExprKind::Or, line, std::move(left), parse_and());
  }
  return left;
}

ExprPtr Parser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    int line = advance().line;
    left = binary(ExprKind::And, line, std::move(left), parse_not());
  }
  return left;
}

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    Nest nest(*this, cur());
    int line = advance().line;
    return unary(ExprKind::Not, line, parse_not());
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
  int line = cur().line;
  ExprPtr first = parse_math1();
  auto e = node(ExprKind::Compare, line);
  e->args.push_back(std::move(first));
  while (true) {
    std::string op;
    if (cur().type == TokenType::Operator &&
        (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">="))) {
      op = advance().value;
    } else if (skip_name("in")) {
      op = "in";
    } else if (is_name("not") && peek().type == TokenType::Name && peek().value == "in") {
      advance();
      advance();
      op = "notin";
    } else {
      break;
    }
    e->ops.push_back(op);
    e->args.push_back(parse_math1());
  }
  if (e->ops.empty()) return std::move(e->args[0]);
  return finish(std::move(e));
}

ExprPtr Parser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Token& t = advance();
    left = binary(ExprKind::Binary, t.line, std::move(left), parse_concat(), t.value);
  }
  return left;
}

ExprPtr Parser::parse_concat() {
  int line = cur().line;
  ExprPtr first = parse_math2();
  if (!is_op("~")) return first;
  auto e = node(ExprKind::Concat, line);
  e->args.push_back(std::move(first));
  while (skip_op("~")) e->args.push_back(parse_math2());
  return finish(std::move(e));
}

ExprPtr Parser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& t = advance();
    left = binary(ExprKind::Binary, t.line, std::move(left), parse_pow(), t.value);
  }
  return left;
}

ExprPtr Parser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (is_op("**")) {
    const Token& t = advance();
    left = binary(ExprKind::Binary, t.line, std::move(left), parse_unary(true), "**");
  }
  return left;
}

ExprPtr Parser::parse_unary(bool with_filter) {
  ExprPtr e;
  if (is_op("-") || is_op("+")) {
    Nest nest(*this, cur());
    const Token& t = advance();
    e = unary(t.value == "-" ? ExprKind::Neg : ExprKind::Pos, t.line, parse_unary(false));
  } else {
    e = parse_postfix(parse_primary());
  }
  if (with_filter) e = parse_filter_expr(std::move(e));
  return e;
}

ExprPtr Parser::parse_primary() {
  const Token& t = cur();
  switch (t.type) {
    case TokenType::Name: {
      advance();
      if (t.value == "true" || t.value == "True") return literal(Value(true), t.line);
      if (t.value == "false" || t.value == "False") return literal(Value(false), t.line);
      if (t.value == "none" || t.value == "None") return literal(Value(None{}), t.line);
      auto e = node(ExprKind::Name, t.line);
      e->name = t.value;
      return e;
    }
    case TokenType::String: {
      std::string s = advance().value;
      while (cur().type == TokenType::String) s += advance().value;
      return literal(Value(std::move(s)), t.line);
    }
    case TokenType::Integer:
      advance();
      return literal(Value(t.integer_value), t.line);
    case TokenType::Float:
      advance();
      return literal(Value(t.float_value), t.line);
    case TokenType::Operator:
      if (t.value == "(") {
        Nest nest(*this, t);
        advance();
        ExprPtr e = parse_tuple(true, true, {});
        expect_op(")");
        return e;
      }
      if (t.value == "[" || t.value == "{") {
        Nest nest(*this, t);
        return t.value == "[" ? parse_list() : parse_dict();
      }
      break;
    default:
      break;
  }
  error(t, fmt::format("unexpected {}", describe(t)));
}

ExprPtr Parser::literal(Value v, int line) {
  auto e = node(ExprKind::Literal, line);
  e->literal = std::move(v);
  return e;
}

ExprPtr Parser::parse_list() {
  auto e = node(ExprKind::List, advance().line);
  while (!is_op("]")) {
    if (!e->args.empty()) expect_op(",");
    if (is_op("]")) break;
    e->args.push_back(parse_expression(true));
  }
  advance();
  return finish(std::move(e));
}

ExprPtr Parser::parse_dict() {
  auto e = node(ExprKind::Dict, advance().line);
  while (!is_op("}")) {
    if (!e->args.empty()) expect_op(",");
    if (is_op("}")) break;
    e->args.push_back(parse_expression(true));
    expect_op(":");
    e->args.push_back(parse_expression(true));
  }
  advance();
  return finish(std::move(e));
}

ExprPtr Parser::parse_postfix(ExprPtr e) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      e = parse_subscript(std::move(e));
    } else if (is_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
  while (true) {
    if (is_op("|")) {
      std::vector<ExprPtr> chain = parse_filter_chain(false);
      for (auto& f : chain) {
        f->args[0] = std::move(e);
        e = finish(std::move(f));
      }
    } else if (is_name("is")) {
      e = parse_test(std::move(e));
    } else if (is_op("(")) {
      e = parse_call(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_subscript(ExprPtr obj) {
  const Token& t = advance();
  if (t.value == ".") {
    const Token& attr = cur();
    if (attr.type == TokenType::Name) {
      advance();
      auto e = node(ExprKind::GetAttr, t.line);
      e->name = attr.value;
      e->args.push_back(std::move(obj));
      return finish(std::move(e));
    }
    if (attr.type != TokenType::Integer) error(attr, "expected a name or number after '.'");
    advance();
    return binary(ExprKind::GetItem, t.line, std::move(obj),
                  literal(Value(attr.integer_value), t.line));
  }
  Nest nest(*this, t);
  std::vector<ExprPtr> keys;
  ExprPtr slice;
  while (!is_op("]")) {
    if (!keys.empty() || slice) expect_op(",");
    ExprPtr start;
    if (!is_op(":")) start = parse_expression(true);
    if (!is_op(":")) {
      keys.push_back(std::move(start));
      continue;
    }
    advance();
    ExprPtr stop, step;
    if (!is_op(":") && !is_op("]") && !is_op(",")) stop = parse_expression(true);
    if (skip_op(":") && !is_op("]") && !is_op(",")) step = parse_expression(true);
    if (slice || !keys.empty()) fail_unsupported(origin_, t.line, "multi-dimensional subscripts");
    slice = node(ExprKind::Slice, t.line);
    slice->args.push_back(nullptr);
    slice->args.push_back(std::move(start));
    slice->args.push_back(std::move(stop));
    slice->args.push_back(std::move(step));
  }
  advance();
  if (slice) {
    if (!keys.empty()) fail_unsupported(origin_, t.line, "multi-dimensional subscripts");
    slice->args[0] = std::move(obj);
    return finish(std::move(slice));
  }
  if (keys.empty()) error(t, "expected a subscript expression inside '[]'");
  ExprPtr key;
  if (keys.size() == 1) {
    key = std::move(keys[0]);
  } else {
    key = node(ExprKind::Tuple, t.line);
    key->args = std::move(keys);
    key = finish(std::move(key));
  }
  return binary(ExprKind::GetItem, t.line, std::move(obj), std::move(key));
}

// (positional..., name=value...) into e->args (after args[0]) and e->kwargs.
void Parser::parse_call_args(Expr& e) {
  const Token& open = cur();
  expect_op("(");
  Nest nest(*this, open);
  bool first = true;
  while (!is_op(")")) {
    if (!first) {
      expect_op(",");
      if (is_op(")")) break;
    }
    first = false;
    if (is_op("*") || is_op("**")) {
      fail_unsupported(origin_, cur().line, "*args / **kwargs in calls");
    }
    if (cur().type == TokenType::Name && peek().type == TokenType::Operator &&
        peek().value == "=") {
      std::string key = advance().value;
      advance();
      e.kwargs.emplace_back(std::move(key), parse_expression(true));
    } else {
      if (!e.kwargs.empty()) error(cur(), "positional argument follows keyword argument");
      e.args.push_back(parse_expression(true));
    }
  }
  advance();
}

ExprPtr Parser::parse_call(ExprPtr callee) {
  auto e = node(ExprKind::Call, cur().line);
  e->args.push_back(std::move(callee));
  parse_call_args(*e);
  return finish(std::move(e));
}

std::string Parser::dotted_name(std::string_view what) {
  std::string name = expect_name(what);
  while (is_op(".") && peek().type == TokenType::Name) {
    advance();
    name += "." + advance().value;
  }
  return name;
}

// `| name(args) | name ...`; `start_inline` when the first filter has no '|'
// (filter blocks). Each Filter's args[0] is left null for the caller to fill.
std::vector<ExprPtr> Parser::parse_filter_chain(bool start_inline) {
  std::vector<ExprPtr> chain;
  while (start_inline || is_op("|")) {
    if (!start_inline) advance();
    start_inline = false;
    auto f = node(ExprKind::Filter, cur().line);
    f->name = dotted_name("a filter name");
    f->args.push_back(nullptr);
    if (is_op("(")) parse_call_args(*f);
    chain.push_back(std::move(f));
  }
  return chain;
}

ExprPtr Parser::parse_test(ExprPtr operand) {
  int line = advance().line;
  auto e = node(ExprKind::Test, line);
  e->negated = skip_name("not");
  e->name = dotted_name("a test name");
  e->args.push_back(std::move(operand));
  const Token& t = cur();
  bool arg_start = t.type == TokenType::Name || t.type == TokenType::String ||
                   t.type == TokenType::Integer || t.type == TokenType::Float ||
                   (t.type == TokenType::Operator && (t.value == "[" || t.value == "{"));
  if (is_op("(")) {
    parse_call_args(*e);
  } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
    if (is_name("is")) error(t, "you cannot chain multiple tests with 'is'");
    e->args.push_back(parse_postfix(parse_primary()));
  }
  return finish(std::move(e));
}

}  // namespace ingot::text::chat
