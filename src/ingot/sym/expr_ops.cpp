// The simplifying constructors: every Expr is built here, already canonical.
//
// Rules (algebra only; range-based rules are in ShapeEnv::simplify):
//   constants fold with Python semantics for // and %;
//   sums collect like terms (s0 + s0 -> 2*s0), products expand and sort;
//   (k*x + r) // k -> x + r // k only when every term is divisible by k (otherwise the
//   divisible terms are pulled out and common factors cancelled: (4*s0 + 2*s1) // 4 ->
//   s0 + s1 // 2); (x // a) // b -> x // (a*b);
//   Mod(k*x + r, k) -> Mod(r, k); Min/Max of equal arguments or arguments that differ by a
//   constant decide; relations of a constant difference fold; Eq/Ne divide out the common
//   factor and fix the sign so Eq(s0, s1) == Eq(s1, s0).
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <utility>

#include "ingot/core/error.h"
#include "ingot/core/sym_int.h"
#include "ingot/sym/expr.h"
#include "ingot/sym/expr_detail.h"

namespace ingot::sym {

using detail::checked_add;
using detail::checked_mul;
using detail::make_node;

Expr integer(int64_t v) {
  return make_node(Kind::Integer, v, {}, {}, {});
}

Expr boolean(bool v) {
  // Two shared nodes: True and False are compared and created often.
  static const Expr t = make_node(Kind::Boolean, 1, {}, {}, {});
  static const Expr f = make_node(Kind::Boolean, 0, {}, {}, {});
  return v ? t : f;
}

Expr symbol(const std::string& name) {
  INGOT_CHECK(!name.empty(), ValueError, "[sym] a symbol needs a name");
  return make_node(Kind::Symbol, 0, name, {}, {});
}

namespace {

void expect_int(const Expr& e, const char* op) {
  INGOT_CHECK(!e.is_bool(), ValueError, "[sym] {} expects integer operands, got '{}'", op, e.str());
}

void expect_bool(const Expr& e, const char* op) {
  INGOT_CHECK(e.is_bool(), ValueError, "[sym] {} expects boolean operands, got '{}'", op, e.str());
}

// a + scale * b on linear forms (terms stay sorted, zero coefficients dropped).
Linear add_linear(const Linear& a, const Linear& b, int64_t scale) {
  Linear r;
  r.constant = checked_add(a.constant, checked_mul(scale, b.constant));
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    int c = i == a.terms.size()   ? 1
            : j == b.terms.size() ? -1
                                  : compare(a.terms[i].first, b.terms[j].first);
    if (c < 0) {
      r.terms.push_back(a.terms[i++]);
    } else if (c > 0) {
      r.terms.emplace_back(b.terms[j].first, checked_mul(scale, b.terms[j].second));
      ++j;
    } else {
      int64_t k = checked_add(a.terms[i].second, checked_mul(scale, b.terms[j].second));
      if (k != 0) r.terms.emplace_back(a.terms[i].first, k);
      ++i, ++j;
    }
  }
  return r;
}

Linear scale_linear(Linear l, int64_t k) {
  if (k == 0) return Linear{};
  l.constant = checked_mul(l.constant, k);
  for (auto& t : l.terms) t.second = checked_mul(t.second, k);
  return l;
}

// Product of two monomials: the sorted union of their factors.
Expr mul_monomials(const Expr& a, const Expr& b) {
  std::vector<Expr> f;
  auto append = [&](const Expr& m) {
    if (m.kind() == Kind::Mul)
      f.insert(f.end(), m->args.begin(), m->args.end());
    else
      f.push_back(m);
  };
  append(a);
  append(b);
  std::sort(f.begin(), f.end(), ExprLess());
  return make_node(Kind::Mul, 0, {}, std::move(f), {});
}

// m / d when the factors of monomial d are a sub-multiset of m's, else nullopt.
std::optional<Expr> divide_monomial(const Expr& m, const Expr& d) {
  auto factors = [](const Expr& x) {
    return x.kind() == Kind::Mul ? x->args : std::vector<Expr>{x};
  };
  std::vector<Expr> fm = factors(m), fd = factors(d), rest;
  size_t j = 0;
  for (const Expr& f : fm) {  // both sorted: a merge walk
    if (j < fd.size() && f == fd[j])
      ++j;
    else
      rest.push_back(f);
  }
  if (j != fd.size()) return std::nullopt;
  if (rest.empty()) return integer(1);
  if (rest.size() == 1) return rest[0];
  return make_node(Kind::Mul, 0, {}, std::move(rest), {});
}

// Splits a = d*q + r where q collects the terms of a divisible by the symbolic monomial
// d (so a // d = q + r // d and Mod(a, d) = Mod(r, d) for any non-zero d).
std::pair<Linear, Linear> split_by_monomial(const Linear& a, const Expr& d) {
  Linear q, r;
  r.constant = a.constant;
  for (const auto& [m, k] : a.terms) {
    if (auto x = divide_monomial(m, d))
      q = add_linear(q, scale_linear(to_linear(*x), k), 1);
    else
      r.terms.emplace_back(m, k);
  }
  return {q, r};
}

int64_t gcd_of_terms(const Linear& l) {
  int64_t g = 0;
  for (const auto& t : l.terms) g = std::gcd(g, t.second);
  return g;
}

// Python floor of a/b for b > 0 without overflow concerns beyond int64.
int64_t floor_div(int64_t a, int64_t b) {
  return floordiv_int(a, b);
}

}  // namespace

// --- arithmetic --------------------------------------------------------------------------

Expr add(const Expr& a, const Expr& b) {
  expect_int(a, "+");
  expect_int(b, "+");
  if (a.is_integer() && b.is_integer()) return integer(checked_add(a.value(), b.value()));
  return from_linear(add_linear(to_linear(a), to_linear(b), 1));
}

Expr sub(const Expr& a, const Expr& b) {
  expect_int(a, "-");
  expect_int(b, "-");
  if (a.is_integer() && b.is_integer()) return integer(checked_add(a.value(), -b.value()));
  return from_linear(add_linear(to_linear(a), to_linear(b), -1));
}

Expr neg(const Expr& a) {
  return sub(integer(0), a);
}

Expr mul(const Expr& a, const Expr& b) {
  expect_int(a, "*");
  expect_int(b, "*");
  if (a.is_integer() && b.is_integer()) return integer(checked_mul(a.value(), b.value()));
  if (a.is_integer()) return from_linear(scale_linear(to_linear(b), a.value()));
  if (b.is_integer()) return from_linear(scale_linear(to_linear(a), b.value()));
  // Expand (ca + sum ka*ma) * (cb + sum kb*mb).
  const Linear la = to_linear(a), lb = to_linear(b);
  Linear r = add_linear(scale_linear(la, lb.constant), scale_linear(lb, la.constant), 1);
  r.constant = checked_mul(la.constant, lb.constant);
  std::map<Expr, int64_t, ExprLess> cross;
  for (const auto& [ma, ka] : la.terms) {
    for (const auto& [mb, kb] : lb.terms) {
      int64_t& k = cross[mul_monomials(ma, mb)];
      k = checked_add(k, checked_mul(ka, kb));
    }
  }
  Linear c;
  for (const auto& [m, k] : cross) {
    if (k != 0) c.terms.emplace_back(m, k);
  }
  return from_linear(add_linear(r, c, 1));
}

Expr floordiv(const Expr& a, const Expr& b) {
  expect_int(a, "//");
  expect_int(b, "//");
  INGOT_CHECK(!(b.is_integer() && b.value() == 0), ValueError, "[sym] division by zero in ({}//0)",
              a.str());
  if (a.is_integer() && b.is_integer()) return integer(floor_div(a.value(), b.value()));
  if (b.is_integer() && b.value() == 1) return a;
  if (b.is_integer() && b.value() == -1) return neg(a);
  if (a.is_integer() && a.value() == 0) return a;
  if (a == b) return integer(1);
  if (b.is_integer() && b.value() > 0) {
    int64_t k = b.value();
    Linear l = to_linear(a);
    Linear whole, rest;
    rest.constant = l.constant;
    for (const auto& [m, c] : l.terms) {
      if (c % k == 0)
        whole.terms.emplace_back(m, c / k);
      else
        rest.terms.emplace_back(m, c);
    }
    if (rest.terms.empty()) {  // every term divisible: (k*x + c) // k = x + c // k
      whole.constant = floor_div(l.constant, k);
      return from_linear(whole);
    }
    // Cancel a common factor of the remaining terms, constant and divisor.
    int64_t g = std::gcd(std::gcd(gcd_of_terms(rest), rest.constant), k);
    if (g > 1) {
      rest.constant /= g;
      for (auto& t : rest.terms) t.second /= g;
      k /= g;
    }
    Expr inner = from_linear(rest);
    Expr q;
    if (inner.kind() == Kind::FloorDiv && inner->args[1].is_integer() &&
        inner->args[1].value() > 0) {  // (x // j) // k = x // (j*k)
      q = make_node(Kind::FloorDiv, 0, {},
                    {inner->args[0], integer(checked_mul(inner->args[1].value(), k))}, {});
    } else {
      q = make_node(Kind::FloorDiv, 0, {}, {inner, integer(k)}, {});
    }
    return whole.terms.empty() ? q : add(from_linear(whole), q);
  }
  if (b.kind() == Kind::Add) {
    // A divisor k*m (k > 1): a // (k*m) = (a // m) // k, since floor(floor(x) / k) =
    // floor(x / k) for a positive integer k; so (32*s0) // (16*s0) -> 2.
    const Linear lb = to_linear(b);
    if (lb.constant == 0 && lb.terms.size() == 1 && lb.terms[0].second > 1)
      return floordiv(floordiv(a, lb.terms[0].first), integer(lb.terms[0].second));
  }
  if (!b.is_integer() && b.kind() != Kind::Add) {  // symbolic monomial divisor
    auto [q, r] = split_by_monomial(to_linear(a), b);
    if (!q.terms.empty() || q.constant != 0) {
      Expr rest = from_linear(r);
      return add(from_linear(q), floordiv(rest, b));
    }
  }
  return make_node(Kind::FloorDiv, 0, {}, {a, b}, {});
}

Expr mod(const Expr& a, const Expr& b) {
  expect_int(a, "%");
  expect_int(b, "%");
  INGOT_CHECK(!(b.is_integer() && b.value() == 0), ValueError, "[sym] modulo by zero in Mod({}, 0)",
              a.str());
  if (a.is_integer() && b.is_integer()) return integer(mod_int(a.value(), b.value()));
  if (b.is_integer() && (b.value() == 1 || b.value() == -1)) return integer(0);
  if (a.is_integer() && a.value() == 0) return a;
  if (a == b) return integer(0);
  if (b.is_integer() && b.value() > 0) {
    int64_t k = b.value();
    Linear l = to_linear(a), rest;
    rest.constant = mod_int(l.constant, k);
    for (const auto& [m, c] : l.terms) {
      int64_t r = mod_int(c, k);  // k*x contributes nothing mod k
      if (r != 0) rest.terms.emplace_back(m, r);
    }
    if (rest.terms.empty()) return integer(rest.constant);
    Expr inner = from_linear(rest);
    // Mod(Mod(x, j), k) = Mod(x, k) when k divides j.
    if (inner.kind() == Kind::Mod && inner->args[1].is_integer() &&
        inner->args[1].value() % k == 0) {
      inner = inner->args[0];
    }
    return make_node(Kind::Mod, 0, {}, {inner, integer(k)}, {});
  }
  if (!b.is_integer() && b.kind() != Kind::Add) {  // symbolic monomial divisor
    auto [q, r] = split_by_monomial(to_linear(a), b);
    if (!q.terms.empty() || q.constant != 0) return mod(from_linear(r), b);
  }
  return make_node(Kind::Mod, 0, {}, {a, b}, {});
}

namespace {

Expr min_max(Kind kind, const Expr& a, const Expr& b) {
  const bool is_min = kind == Kind::Min;
  expect_int(a, is_min ? "Min" : "Max");
  expect_int(b, is_min ? "Min" : "Max");
  if (a == b) return a;
  Expr d = sub(a, b);
  if (d.is_integer()) return (d.value() <= 0) == is_min ? a : b;
  // Min(a, Min(a, c)) = Min(a, c)
  for (const auto& [x, y] : {std::pair(a, b), std::pair(b, a)}) {
    if (y.kind() == kind && (y->args[0] == x || y->args[1] == x)) return y;
  }
  std::vector<Expr> args = {a, b};
  std::sort(args.begin(), args.end(), ExprLess());
  return make_node(kind, 0, {}, std::move(args), {});
}

}  // namespace

Expr min(const Expr& a, const Expr& b) {
  return min_max(Kind::Min, a, b);
}
Expr max(const Expr& a, const Expr& b) {
  return min_max(Kind::Max, a, b);
}

// --- relations ---------------------------------------------------------------------------

namespace {

// Builds `difference OP 0` as lhs OP rhs: positive terms (and a positive constant) on
// the left, negated negative terms (and a negative constant) on the right.
Expr relation(Kind kind, const Expr& a, const Expr& b) {
  expect_int(a, "a comparison");
  expect_int(b, "a comparison");
  Linear d = to_linear(sub(a, b));
  if (d.terms.empty()) {
    int64_t c = d.constant;
    switch (kind) {
      case Kind::Eq:
        return boolean(c == 0);
      case Kind::Ne:
        return boolean(c != 0);
      case Kind::Lt:
        return boolean(c < 0);
      default:
        return boolean(c <= 0);
    }
  }
  const int64_t g = gcd_of_terms(d);
  if (kind == Kind::Eq || kind == Kind::Ne) {
    if (d.constant % g != 0) return boolean(kind == Kind::Ne);
    d = Linear{d.constant / g, d.terms};
    for (auto& t : d.terms) t.second /= g;
    if (d.terms[0].second < 0) d = scale_linear(d, -1);
  } else if (g > 1) {
    // g*x + c <= 0  <=>  x + ceil(c/g) <= 0;  g*x + c < 0  <=>  g*x + c + 1 <= 0.
    int64_t c = kind == Kind::Lt ? checked_add(d.constant, 1) : d.constant;
    kind = Kind::Le;
    d.constant = -floor_div(-c, g);
    for (auto& t : d.terms) t.second /= g;
  }
  Linear lhs, rhs;
  for (const auto& [m, k] : d.terms) {
    if (k > 0)
      lhs.terms.emplace_back(m, k);
    else
      rhs.terms.emplace_back(m, -k);
  }
  if (d.constant > 0)
    lhs.constant = d.constant;
  else
    rhs.constant = -d.constant;
  return make_node(kind, 0, {}, {from_linear(lhs), from_linear(rhs)}, {});
}

// Flattened, sorted, deduplicated And/Or with constants folded.
Expr junction(Kind kind, const Expr& a, const Expr& b) {
  const bool is_and = kind == Kind::And;
  expect_bool(a, is_and ? "And" : "Or");
  expect_bool(b, is_and ? "And" : "Or");
  std::vector<Expr> args;
  for (const Expr& x : {a, b}) {
    if (x.is_boolean()) {
      if ((x.value() != 0) != is_and) return x;  // False in And, True in Or
      continue;
    }
    if (x.kind() == kind)
      args.insert(args.end(), x->args.begin(), x->args.end());
    else
      args.push_back(x);
  }
  std::sort(args.begin(), args.end(), ExprLess());
  args.erase(std::unique(args.begin(), args.end()), args.end());
  if (args.empty()) return boolean(is_and);
  if (args.size() == 1) return args[0];
  return make_node(kind, 0, {}, std::move(args), {});
}

}  // namespace

Expr eq(const Expr& a, const Expr& b) {
  return relation(Kind::Eq, a, b);
}
Expr ne(const Expr& a, const Expr& b) {
  return relation(Kind::Ne, a, b);
}
Expr lt(const Expr& a, const Expr& b) {
  return relation(Kind::Lt, a, b);
}
Expr le(const Expr& a, const Expr& b) {
  return relation(Kind::Le, a, b);
}
Expr gt(const Expr& a, const Expr& b) {
  return relation(Kind::Lt, b, a);
}
Expr ge(const Expr& a, const Expr& b) {
  return relation(Kind::Le, b, a);
}
Expr logical_and(const Expr& a, const Expr& b) {
  return junction(Kind::And, a, b);
}
Expr logical_or(const Expr& a, const Expr& b) {
  return junction(Kind::Or, a, b);
}

Expr logical_not(const Expr& a) {
  expect_bool(a, "Not");
  const auto& x = a->args;
  switch (a.kind()) {
    case Kind::Boolean:
      return boolean(a.value() == 0);
    case Kind::Not:
      return x[0];
    case Kind::Eq:
      return ne(x[0], x[1]);
    case Kind::Ne:
      return eq(x[0], x[1]);
    case Kind::Lt:
      return le(x[1], x[0]);
    case Kind::Le:
      return lt(x[1], x[0]);
    default:
      return make_node(Kind::Not, 0, {}, {a}, {});
  }
}

Expr rebuild(const Expr& e, const std::vector<Expr>& args) {
  switch (e.kind()) {
    case Kind::Integer:
    case Kind::Boolean:
    case Kind::Symbol:
      return e;
    case Kind::Add: {
      Expr r = integer(e->value);
      for (size_t i = 0; i < args.size(); ++i) r = add(r, mul(integer(e->coeffs[i]), args[i]));
      return r;
    }
    case Kind::Mul: {
      Expr r = integer(1);
      for (const Expr& f : args) r = mul(r, f);
      return r;
    }
    case Kind::FloorDiv:
      return floordiv(args[0], args[1]);
    case Kind::Mod:
      return mod(args[0], args[1]);
    case Kind::Min:
      return min(args[0], args[1]);
    case Kind::Max:
      return max(args[0], args[1]);
    case Kind::Eq:
      return eq(args[0], args[1]);
    case Kind::Ne:
      return ne(args[0], args[1]);
    case Kind::Lt:
      return lt(args[0], args[1]);
    case Kind::Le:
      return le(args[0], args[1]);
    case Kind::And:
    case Kind::Or: {
      Expr r = boolean(e.kind() == Kind::And);
      for (const Expr& x : args) r = junction(e.kind(), r, x);
      return r;
    }
    case Kind::Not:
      return logical_not(args[0]);
  }
  INGOT_THROW(InternalError, "[sym] unknown expression kind");
}

}  // namespace ingot::sym
