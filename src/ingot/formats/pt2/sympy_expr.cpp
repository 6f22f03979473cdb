#include "ingot/formats/pt2/sympy_expr.h"

#include <cctype>
#include <vector>

#include "ingot/core/error.h"

namespace ingot::pt2 {
namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxArgs = 256;

// Recursive-descent reader of srepr text: HEAD(arg, ..., key=value), 'strings', integers.
class Parser {
 public:
  Parser(std::string_view s, const std::string& where) : s_(s), where_(where) {}

  sym::Expr parse() {
    sym::Expr e = expr(0);
    skip();
    if (pos_ != s_.size()) fail("unexpected text after the expression");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw IoError(fmt::format("[pt2] {}: cannot read the symbolic expression '{}': {} (at {})",
                              where_, std::string(s_.substr(0, 200)), what, pos_));
  }
  void skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string ident() {
    skip();
    const size_t b = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      ++pos_;
    return std::string(s_.substr(b, pos_ - b));
  }
  int64_t integer() {
    skip();
    const bool negative = eat('-');
    skip();
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail("expected an integer");
    uint64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      if (v > (uint64_t(INT64_MAX) - 9) / 10) fail("integer out of range");
      v = v * 10 + uint64_t(s_[pos_++] - '0');
    }
    return negative ? -int64_t(v) : int64_t(v);
  }
  std::string quoted() {
    skip();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted name");
    const char q = s_[pos_++];
    const size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) ++pos_;
    if (pos_ >= s_.size()) fail("unterminated quoted name");
    return std::string(s_.substr(b, pos_++ - b));
  }
  // Skips `key=value` options (Symbol's assumptions).
  void options() {
    while (eat(',')) {
      ident();
      expect('=');
      ident();
    }
  }

  sym::Expr expr(int depth) {
    if (depth > kMaxDepth) fail(fmt::format("nested deeper than {} levels", kMaxDepth));
    skip();
    if (pos_ < s_.size() && (s_[pos_] == '-' || std::isdigit(static_cast<unsigned char>(s_[pos_]))))
      return sym::integer(integer());
    const std::string head = ident();
    if (head.empty()) fail("expected an expression");
    if (head == "true" || head == "True" || head == "BooleanTrue") return sym::boolean(true);
    if (head == "false" || head == "False" || head == "BooleanFalse") return sym::boolean(false);
    if (!eat('(')) return sym::symbol(head);  // str() form: a bare symbol name
    if (head == "Integer") {
      const int64_t v = integer();
      expect(')');
      return sym::integer(v);
    }
    if (head == "Symbol") {
      const std::string name = quoted();
      options();
      expect(')');
      if (name.empty()) fail("empty symbol name");
      return sym::symbol(name);
    }
    std::vector<sym::Expr> args;
    if (!eat(')')) {
      do {
        if (args.size() >= kMaxArgs) fail(fmt::format("more than {} operands", kMaxArgs));
        args.push_back(expr(depth + 1));
      } while (eat(','));
      expect(')');
    }
    return combine(head, args);
  }

  sym::Expr combine(const std::string& head, const std::vector<sym::Expr>& a) {
    auto need = [&](size_t n) {
      if (a.size() != n) fail(fmt::format("{} takes {} operands, got {}", head, n, a.size()));
    };
    auto fold = [&](sym::Expr (*f)(const sym::Expr&, const sym::Expr&)) {
      if (a.size() < 2) fail(fmt::format("{} needs at least 2 operands", head));
      sym::Expr r = a[0];
      for (size_t i = 1; i < a.size(); ++i) r = f(r, a[i]);
      return r;
    };
    if (head == "Add") return fold(sym::add);
    if (head == "Mul") return fold(sym::mul);
    if (head == "Max") return fold(sym::max);
    if (head == "Min") return fold(sym::min);
    if (head == "And") return fold(sym::logical_and);
    if (head == "Or") return fold(sym::logical_or);
    if (head == "Not") {
      need(1);
      return sym::logical_not(a[0]);
    }
    if (head == "Pow") {
      need(2);
      const auto k = a[1].maybe_value();
      if (!a[1].is_integer() || !k || *k < 0 || *k > 64)
        fail("Pow needs a small non-negative integer exponent");
      sym::Expr r = sym::integer(1);
      for (int64_t i = 0; i < *k; ++i) r = sym::mul(r, a[0]);
      return r;
    }
    need(2);
    if (head == "FloorDiv") {
      if (a[1] == sym::integer(0)) fail("division by zero");
      return sym::floordiv(a[0], a[1]);
    }
    if (head == "Mod" || head == "PythonMod") {
      if (a[1] == sym::integer(0)) fail("modulo by zero");
      return sym::mod(a[0], a[1]);
    }
    if (head == "Eq") return sym::eq(a[0], a[1]);
    if (head == "Ne") return sym::ne(a[0], a[1]);
    if (head == "StrictLessThan") return sym::lt(a[0], a[1]);
    if (head == "LessThan") return sym::le(a[0], a[1]);
    if (head == "StrictGreaterThan") return sym::gt(a[0], a[1]);
    if (head == "GreaterThan") return sym::ge(a[0], a[1]);
    fail(fmt::format("'{}' is not a supported sympy function", head));
  }

  std::string_view s_;
  const std::string& where_;
  size_t pos_ = 0;
};

}  // namespace

sym::Expr parse_sympy(std::string_view text, const std::string& where) {
  try {
    return Parser(text, where).parse();
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    // The sym:: constructors reject ill-typed combinations (a sum of booleans).
    throw IoError(fmt::format("[pt2] {}: the symbolic expression '{}' is not well formed: {}",
                              where, std::string(text.substr(0, 200)), e.what()));
  }
}

}  // namespace ingot::pt2
