// Printing expressions the way torch (sympy's printer) writes them in guards and errors:
//   2*s0 + s1 - 3   s0*s1   s0**2   (s0//2)   ((s0 + 1)//2)   Mod(s0, 2)   Min(s0, s1)
//   Eq(s0, s1)   Ne(u0, 0)   s0 < 5   2 <= s0   Eq(s1, 2) & (s0 < 5)   ~((a) | (b))
#include <fmt/format.h>

#include <string>

#include "ingot/sym/expr.h"

namespace ingot::sym {
namespace {

std::string print(const Expr& e);

// Operands of // that are sums need parentheses: ((s0 + 1)//2).
std::string operand(const Expr& e) {
  return e.kind() == Kind::Add ? fmt::format("({})", print(e)) : print(e);
}

// Operands of & | ~ that are infix relations or junctions are parenthesised.
std::string bool_operand(const Expr& e) {
  switch (e.kind()) {
    case Kind::Lt:
    case Kind::Le:
    case Kind::And:
    case Kind::Or:
    case Kind::Not:
      return fmt::format("({})", print(e));
    default:
      return print(e);
  }
}

std::string print_mul(const Expr& e) {
  std::string out;
  const auto& f = e->args;
  for (size_t i = 0; i < f.size();) {
    size_t j = i;
    while (j < f.size() && f[j] == f[i]) ++j;  // equal factors are adjacent (sorted)
    if (!out.empty()) out += "*";
    out += print(f[i]);
    if (j - i > 1) out += fmt::format("**{}", j - i);
    i = j;
  }
  return out;
}

std::string print_add(const Expr& e) {
  std::string out;
  auto append = [&](int64_t k, const std::string& text) {
    // text is the magnitude; k carries the sign.
    if (out.empty())
      out = k < 0 ? fmt::format("-{}", text) : text;
    else
      out += (k < 0 ? " - " : " + ") + text;
  };
  for (size_t i = 0; i < e->args.size(); ++i) {
    int64_t k = e->coeffs[i];
    uint64_t mag = k < 0 ? 0 - uint64_t(k) : uint64_t(k);
    std::string m = print(e->args[i]);
    append(k, mag == 1 ? m : fmt::format("{}*{}", mag, m));
  }
  if (int64_t c = e->value; c != 0) {
    uint64_t mag = c < 0 ? 0 - uint64_t(c) : uint64_t(c);
    append(c, std::to_string(mag));
  }
  return out;
}

std::string join(const Expr& e, const char* sep) {
  std::string out;
  for (const Expr& a : e->args) {
    if (!out.empty()) out += sep;
    out += bool_operand(a);
  }
  return out;
}

std::string call(const char* fn, const Expr& e) {
  return fmt::format("{}({}, {})", fn, print(e->args[0]), print(e->args[1]));
}

std::string print(const Expr& e) {
  const auto& a = e->args;
  switch (e.kind()) {
    case Kind::Integer:
      return std::to_string(e->value);
    case Kind::Boolean:
      return e->value ? "True" : "False";
    case Kind::Symbol:
      return e->name;
    case Kind::Add:
      return print_add(e);
    case Kind::Mul:
      return print_mul(e);
    case Kind::FloorDiv:
      return fmt::format("({}//{})", operand(a[0]), operand(a[1]));
    case Kind::Mod:
      return call("Mod", e);
    case Kind::Min:
      return call("Min", e);
    case Kind::Max:
      return call("Max", e);
    case Kind::Eq:
      return call("Eq", e);
    case Kind::Ne:
      return call("Ne", e);
    case Kind::Lt:
      return fmt::format("{} < {}", print(a[0]), print(a[1]));
    case Kind::Le:
      return fmt::format("{} <= {}", print(a[0]), print(a[1]));
    case Kind::And:
      return join(e, " & ");
    case Kind::Or:
      return join(e, " | ");
    case Kind::Not:
      return fmt::format("~{}", bool_operand(a[0]));
  }
  return "?";
}

}  // namespace

std::string Expr::str() const {
  return print(*this);
}

}  // namespace ingot::sym
