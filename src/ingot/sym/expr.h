// Symbolic integer and boolean expressions, always kept in one canonical simplified form.
//
// An Expr is an immutable, shared tree. Every constructor below simplifies as it builds,
// so two expressions that are equal by the rules here are structurally equal (==) and
// hash alike. The canonical forms:
//
//   integer   Integer(c)
//             Symbol(name)                       s0, u0
//             Mul(f1, f2, ...)                   product of >= 2 atoms, sorted (s0*s1)
//             FloorDiv(a, b), Mod(a, b)          Python semantics (result sign of divisor)
//             Min(a, b), Max(a, b)               arguments sorted
//             Add(c; k1*m1 + k2*m2 + ...)        a linear combination of monomials with
//                                                non-zero integer coefficients; used only
//                                                when the expression is not a bare monomial
//   boolean   Boolean(true/false)
//             Eq/Ne/Lt/Le(lhs, rhs)              lhs - rhs moved to "positive terms on the
//                                                left, negative on the right"
//             And(...), Or(...)                  flattened, sorted, deduplicated
//             Not(x)                             only of And/Or (relations are negated)
//
// Products are expanded ((s0 + 1)*s1 -> s0*s1 + s1) so that sums compare equal term by
// term. Rules that need to know the range of a symbol (Min(s0, 1) -> 1 when s0 >= 2) live
// in ShapeEnv::simplify, not here: these constructors use only algebra.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ingot::sym {

// The order matters: it is the first key of the canonical operand order (so sums list
// symbols before products before FloorDiv...), and every kind from Boolean on is boolean.
enum class Kind : uint8_t {
  // integer-valued
  Integer,
  Symbol,
  Mul,
  FloorDiv,
  Mod,
  Min,
  Max,
  Add,
  // boolean-valued
  Boolean,
  Eq,
  Ne,
  Lt,
  Le,
  And,
  Or,
  Not,
};

struct Node;

// A handle to an immutable expression node. Default-constructed Expr is the integer 0.
class Expr {
 public:
  Expr();
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

  const Node& node() const { return *node_; }
  const Node* operator->() const { return node_.get(); }
  Kind kind() const;
  bool is_bool() const { return kind() >= Kind::Boolean; }
  bool is_integer() const { return kind() == Kind::Integer; }  // an integer constant
  bool is_boolean() const { return kind() == Kind::Boolean; }  // True or False
  bool is_symbol() const { return kind() == Kind::Symbol; }
  bool is_constant() const { return is_integer() || is_boolean(); }
  // The value of Integer (or Boolean as 0/1); throws InternalError otherwise.
  int64_t value() const;
  std::optional<int64_t> maybe_value() const;
  const std::string& name() const;  // Symbol only
  size_t hash() const;

  // Printed like torch (sympy): s0, 2*s0 + 1, (s0//2), Mod(s0, 2), Eq(s0, s1), s0 < 5.
  std::string str() const;

  // Structural equality (== canonical equality); not a symbolic Eq.
  friend bool operator==(const Expr& a, const Expr& b);

 private:
  std::shared_ptr<const Node> node_;
};

struct Node {
  Kind kind;
  int64_t value = 0;            // Integer / Boolean: the value. Add: the constant term.
  std::string name;             // Symbol: its name.
  std::vector<Expr> args;       // operands; Add: the monomials; Mul: the factors.
  std::vector<int64_t> coeffs;  // Add only: coefficient of each monomial.
  size_t hash = 0;
};

// Total order used to sort operands canonically (symbols by natural name order:
// s2 < s10). Returns <0, 0, >0.
int compare(const Expr& a, const Expr& b);
struct ExprLess {
  bool operator()(const Expr& a, const Expr& b) const { return compare(a, b) < 0; }
};
struct ExprHash {
  size_t operator()(const Expr& e) const { return e.hash(); }
};

// --- construction (each simplifies) ------------------------------------------------------

Expr integer(int64_t v);
Expr boolean(bool v);
Expr symbol(const std::string& name);

Expr add(const Expr& a, const Expr& b);
Expr sub(const Expr& a, const Expr& b);
Expr mul(const Expr& a, const Expr& b);
Expr neg(const Expr& a);
Expr floordiv(const Expr& a, const Expr& b);  // throws ValueError on a constant 0 divisor
Expr mod(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);

Expr eq(const Expr& a, const Expr& b);
Expr ne(const Expr& a, const Expr& b);
Expr lt(const Expr& a, const Expr& b);
Expr le(const Expr& a, const Expr& b);
Expr gt(const Expr& a, const Expr& b);  // = lt(b, a)
Expr ge(const Expr& a, const Expr& b);  // = le(b, a)
Expr logical_and(const Expr& a, const Expr& b);
Expr logical_or(const Expr& a, const Expr& b);
Expr logical_not(const Expr& a);

// Rebuilds a node of e's kind over new operands, simplifying (same rules as above).
Expr rebuild(const Expr& e, const std::vector<Expr>& args);

// Test / caller convenience.
inline Expr operator+(const Expr& a, const Expr& b) {
  return add(a, b);
}
inline Expr operator-(const Expr& a, const Expr& b) {
  return sub(a, b);
}
inline Expr operator*(const Expr& a, const Expr& b) {
  return mul(a, b);
}
inline Expr operator+(const Expr& a, int64_t b) {
  return add(a, integer(b));
}
inline Expr operator-(const Expr& a, int64_t b) {
  return sub(a, integer(b));
}
inline Expr operator*(int64_t a, const Expr& b) {
  return mul(integer(a), b);
}
inline Expr operator*(const Expr& a, int64_t b) {
  return mul(a, integer(b));
}

// --- linear view -------------------------------------------------------------------------

// An integer expression as constant + sum of coefficient * monomial (monomials sorted,
// coefficients non-zero). Every integer Expr has one.
struct Linear {
  int64_t constant = 0;
  std::vector<std::pair<Expr, int64_t>> terms;  // (monomial, coefficient)
};
Linear to_linear(const Expr& e);
Expr from_linear(const Linear& l);
// lhs - rhs of a relation (Eq/Ne/Lt/Le); the relation says `difference OP 0`.
Expr difference(const Expr& relation);

// --- traversal ---------------------------------------------------------------------------

// Symbols occurring in e, sorted, without duplicates.
std::vector<Expr> free_symbols(const Expr& e);
// Replaces symbols for which `f` returns an expression, re-simplifying bottom-up.
Expr substitute(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f);
// Bottom-up rewrite: `post` sees each rebuilt node and may replace it.
Expr transform(const Expr& e, const std::function<Expr(const Expr&)>& post);
// The value of e with every symbol given by `value_of` (which throws if it cannot).
// Booleans evaluate to 0/1.
int64_t evaluate(const Expr& e, const std::function<int64_t(const Expr&)>& value_of);

}  // namespace ingot::sym

template <>
struct std::hash<ingot::sym::Expr> {
  size_t operator()(const ingot::sym::Expr& e) const { return e.hash(); }
};
