// Expr nodes, canonical ordering, the linear view and traversal. The simplifying
// constructors are in expr_ops.cpp, printing in expr_print.cpp.
#include "ingot/sym/expr.h"

#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "ingot/core/error.h"
#include "ingot/core/sym_int.h"
#include "ingot/sym/expr_detail.h"

namespace ingot::sym {

namespace detail {

size_t hash_combine(size_t seed, size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

Expr make_node(Kind kind, int64_t value, std::string name, std::vector<Expr> args,
               std::vector<int64_t> coeffs) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->value = value;
  n->name = std::move(name);
  n->args = std::move(args);
  n->coeffs = std::move(coeffs);
  size_t h = hash_combine(std::hash<int>()(int(kind)), std::hash<int64_t>()(n->value));
  h = hash_combine(h, std::hash<std::string>()(n->name));
  for (const Expr& a : n->args) h = hash_combine(h, a.hash());
  for (int64_t c : n->coeffs) h = hash_combine(h, std::hash<int64_t>()(c));
  n->hash = h;
  return Expr(std::move(n));
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  INGOT_CHECK(!__builtin_add_overflow(a, b, &r), ValueError,
              "[sym] integer overflow in symbolic arithmetic ({} + {})", a, b);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  INGOT_CHECK(!__builtin_mul_overflow(a, b, &r), ValueError,
              "[sym] integer overflow in symbolic arithmetic ({} * {})", a, b);
  return r;
}

}  // namespace detail

using detail::make_node;

Expr::Expr() : Expr(integer(0)) {}

Kind Expr::kind() const {
  return node_->kind;
}

int64_t Expr::value() const {
  INGOT_CHECK(is_constant(), InternalError, "[sym] '{}' is not a constant", str());
  return node_->value;
}

std::optional<int64_t> Expr::maybe_value() const {
  if (!is_constant()) return std::nullopt;
  return node_->value;
}

const std::string& Expr::name() const {
  INGOT_CHECK(is_symbol(), InternalError, "[sym] '{}' is not a symbol", str());
  return node_->name;
}

size_t Expr::hash() const {
  return node_->hash;
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.node_ == b.node_) return true;
  if (a.hash() != b.hash()) return false;
  return compare(a, b) == 0;
}

namespace {

// Natural order of names: split "s12" into ("s", 12) so s2 < s10.
int compare_names(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    size_t i = s.size();
    while (i > 0 && std::isdigit(static_cast<unsigned char>(s[i - 1]))) --i;
    std::string digits = s.substr(i);
    // Long digit runs compare by length first, then text (no overflow).
    return std::tuple(s.substr(0, i), digits.size(), digits);
  };
  auto ka = split(a), kb = split(b);
  if (ka != kb) return ka < kb ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

template <typename T>
int three_way(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

int compare(const Expr& a, const Expr& b) {
  if (&a.node() == &b.node()) return 0;
  const Node& x = a.node();
  const Node& y = b.node();
  if (int c = three_way(int(x.kind), int(y.kind))) return c;
  if (x.kind == Kind::Symbol) return compare_names(x.name, y.name);
  if (int c = three_way(x.value, y.value)) return c;
  if (int c = three_way(x.args.size(), y.args.size())) return c;
  for (size_t i = 0; i < x.args.size(); ++i) {
    if (int c = compare(x.args[i], y.args[i])) return c;
  }
  return three_way(x.coeffs, y.coeffs);
}

// --- linear view -------------------------------------------------------------------------

Linear to_linear(const Expr& e) {
  INGOT_CHECK(!e.is_bool(), InternalError, "[sym] '{}' is boolean, expected an integer", e.str());
  Linear l;
  if (e.is_integer()) {
    l.constant = e.value();
  } else if (e.kind() == Kind::Add) {
    l.constant = e->value;
    for (size_t i = 0; i < e->args.size(); ++i) l.terms.emplace_back(e->args[i], e->coeffs[i]);
  } else {
    l.terms.emplace_back(e, 1);
  }
  return l;
}

Expr from_linear(const Linear& l) {
  std::vector<Expr> monomials;
  std::vector<int64_t> coeffs;
  for (const auto& [m, k] : l.terms) {
    if (k == 0) continue;
    monomials.push_back(m);
    coeffs.push_back(k);
  }
  if (monomials.empty()) return integer(l.constant);
  if (l.constant == 0 && monomials.size() == 1 && coeffs[0] == 1) return monomials[0];
  return make_node(Kind::Add, l.constant, {}, std::move(monomials), std::move(coeffs));
}

Expr difference(const Expr& relation) {
  const Kind k = relation.kind();
  INGOT_CHECK(k == Kind::Eq || k == Kind::Ne || k == Kind::Lt || k == Kind::Le, InternalError,
              "[sym] '{}' is not a relation", relation.str());
  return sub(relation->args[0], relation->args[1]);
}

// --- traversal ---------------------------------------------------------------------------

std::vector<Expr> free_symbols(const Expr& e) {
  std::set<Expr, ExprLess> found;
  std::function<void(const Expr&)> walk = [&](const Expr& x) {
    if (x.is_symbol()) found.insert(x);
    for (const Expr& a : x->args) walk(a);
  };
  walk(e);
  return {found.begin(), found.end()};
}

Expr transform(const Expr& e, const std::function<Expr(const Expr&)>& post) {
  if (e->args.empty()) return post(e);
  std::vector<Expr> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(transform(a, post));
    changed = changed || !(&args.back().node() == &a.node());
  }
  return post(changed ? rebuild(e, args) : e);
}

Expr substitute(const Expr& e, const std::function<std::optional<Expr>(const Expr&)>& f) {
  return transform(e, [&](const Expr& x) {
    if (!x.is_symbol()) return x;
    auto r = f(x);
    return r ? *r : x;
  });
}

int64_t evaluate(const Expr& e, const std::function<int64_t(const Expr&)>& value_of) {
  auto arg = [&](size_t i) { return evaluate(e->args[i], value_of); };
  switch (e.kind()) {
    case Kind::Integer:
    case Kind::Boolean:
      return e->value;
    case Kind::Symbol:
      return value_of(e);
    case Kind::Add: {
      int64_t r = e->value;
      for (size_t i = 0; i < e->args.size(); ++i) {
        r = detail::checked_add(r, detail::checked_mul(e->coeffs[i], arg(i)));
      }
      return r;
    }
    case Kind::Mul: {
      int64_t r = 1;
      for (size_t i = 0; i < e->args.size(); ++i) r = detail::checked_mul(r, arg(i));
      return r;
    }
    case Kind::FloorDiv:
      return floordiv_int(arg(0), arg(1));
    case Kind::Mod:
      return mod_int(arg(0), arg(1));
    case Kind::Min:
      return std::min(arg(0), arg(1));
    case Kind::Max:
      return std::max(arg(0), arg(1));
    case Kind::Eq:
      return arg(0) == arg(1);
    case Kind::Ne:
      return arg(0) != arg(1);
    case Kind::Lt:
      return arg(0) < arg(1);
    case Kind::Le:
      return arg(0) <= arg(1);
    case Kind::And:
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (!arg(i)) return 0;
      }
      return 1;
    case Kind::Or:
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (arg(i)) return 1;
      }
      return 0;
    case Kind::Not:
      return !arg(0);
  }
  INGOT_THROW(InternalError, "[sym] unknown expression kind");
}

}  // namespace ingot::sym
