// Recursive-descent parser for the chat-template engine (jinja2's grammar).
#include "ingot/models/chat/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "ingot/models/chat/errors.h"

namespace ingot::models::chat {

namespace {

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

  // --- statements ---
  // Parses until `{% <one of ends> %}` (consuming '{%' and the end name, which is
  // returned in `end`) or the end of the template when `ends` is empty.
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& end) {
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == TokenType::End) {
        if (ends.size() == 0) return body;
        std::string wanted;
        for (auto e : ends) wanted += (wanted.empty() ? "" : " or ") + fmt::format("'{}'", e);
        error(t, fmt::format("unexpected end of template, expected {}", wanted));
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

  std::unique_ptr<Stmt> parse_statement(std::initializer_list<std::string_view> ends) {
    const Token& t = cur();
    if (t.type != TokenType::Name)
      error(t, fmt::format("expected a tag name, got {}", describe(t)));
    Nest nest(*this, t);
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
                   : fmt::format("unexpected '{{% {} %}}': the innermost open block expects {}",
                                 tag, wanted));
    }
    return s;
  }

  Body body_until(std::string_view end_tag) {
    std::string end;
    Body b = parse_body({end_tag}, end);
    expect_block_end(end_tag);
    return b;
  }

  void parse_if(Stmt& s) {
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

  Target parse_target(bool with_namespace, std::string_view stop_name) {
    Target target;
    while (true) {
      const Token& t = cur();
      if (t.type != TokenType::Name || t.value == "true" || t.value == "false" ||
          t.value == "none" || t.value == "True" || t.value == "False" || t.value == "None") {
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

  void parse_for(Stmt& s) {
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

  void parse_set(Stmt& s) {
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

  void parse_macro(Stmt& s) {
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

  void parse_with(Stmt& s) {
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

  // --- expressions ---
  bool is_tuple_end(std::initializer_list<std::string_view> extra) const {
    TokenType t = cur().type;
    if (t == TokenType::VarEnd || t == TokenType::BlockEnd || t == TokenType::End || is_op(")")) {
      return true;
    }
    return cur().type == TokenType::Name &&
           std::find(extra.begin(), extra.end(), cur().value) != extra.end();
  }

  ExprPtr parse_tuple(bool explicit_parens, bool with_condexpr,
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

  ExprPtr parse_expression(bool with_condexpr) {
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

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      int line = advance().line;
      left = binary(ExprKind::Or, line, std::move(left), parse_and());
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      int line = advance().line;
      left = binary(ExprKind::And, line, std::move(left), parse_not());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      Nest nest(*this, cur());
      int line = advance().line;
      return unary(ExprKind::Not, line, parse_not());
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
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

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = advance();
      left = binary(ExprKind::Binary, t.line, std::move(left), parse_concat(), t.value);
    }
    return left;
  }

  ExprPtr parse_concat() {
    int line = cur().line;
    ExprPtr first = parse_math2();
    if (!is_op("~")) return first;
    auto e = node(ExprKind::Concat, line);
    e->args.push_back(std::move(first));
    while (skip_op("~")) e->args.push_back(parse_math2());
    return finish(std::move(e));
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = advance();
      left = binary(ExprKind::Binary, t.line, std::move(left), parse_pow(), t.value);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const Token& t = advance();
      left = binary(ExprKind::Binary, t.line, std::move(left), parse_unary(true), "**");
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
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

  ExprPtr parse_primary() {
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

  ExprPtr literal(Value v, int line) {
    auto e = node(ExprKind::Literal, line);
    e->literal = std::move(v);
    return e;
  }

  ExprPtr parse_list() {
    auto e = node(ExprKind::List, advance().line);
    while (!is_op("]")) {
      if (!e->args.empty()) expect_op(",");
      if (is_op("]")) break;
      e->args.push_back(parse_expression(true));
    }
    advance();
    return finish(std::move(e));
  }

  ExprPtr parse_dict() {
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

  ExprPtr parse_postfix(ExprPtr e) {
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

  ExprPtr parse_filter_expr(ExprPtr e) {
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

  ExprPtr parse_subscript(ExprPtr obj) {
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
  void parse_call_args(Expr& e) {
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

  ExprPtr parse_call(ExprPtr callee) {
    auto e = node(ExprKind::Call, cur().line);
    e->args.push_back(std::move(callee));
    parse_call_args(*e);
    return finish(std::move(e));
  }

  std::string dotted_name(std::string_view what) {
    std::string name = expect_name(what);
    while (is_op(".") && peek().type == TokenType::Name) {
      advance();
      name += "." + advance().value;
    }
    return name;
  }

  // `| name(args) | name ...`; `start_inline` when the first filter has no '|'
  // (filter blocks). Each Filter's args[0] is left null for the caller to fill.
  std::vector<ExprPtr> parse_filter_chain(bool start_inline) {
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

  ExprPtr parse_test(ExprPtr operand) {
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

  const std::vector<Token>& tokens_;
  const std::string& origin_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int loops_ = 0;
};

}  // namespace

Body parse_template(const std::vector<Token>& tokens, const std::string& origin) {
  return Parser(tokens, origin).run();
}

}  // namespace ingot::models::chat
