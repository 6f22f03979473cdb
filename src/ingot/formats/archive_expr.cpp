// Symbolic expressions in the archive: written node by node, read back through the
// simplifying constructors (so a decoded expression is canonical whatever the file says).
#include <string_view>

#include "ingot/formats/archive_codec.h"

namespace ingot::archive {

namespace {

struct KindName {
  sym::Kind kind;
  std::string_view name;
  int min_args;  // operand count for compound kinds
  int max_args;  // -1: unbounded
};
constexpr KindName kCompound[] = {
    {sym::Kind::Mul, "Mul", 2, -1}, {sym::Kind::FloorDiv, "FloorDiv", 2, 2},
    {sym::Kind::Mod, "Mod", 2, 2},  {sym::Kind::Min, "Min", 2, 2},
    {sym::Kind::Max, "Max", 2, 2},  {sym::Kind::Eq, "Eq", 2, 2},
    {sym::Kind::Ne, "Ne", 2, 2},    {sym::Kind::Lt, "Lt", 2, 2},
    {sym::Kind::Le, "Le", 2, 2},    {sym::Kind::And, "And", 2, -1},
    {sym::Kind::Or, "Or", 2, -1},   {sym::Kind::Not, "Not", 1, 1},
    {sym::Kind::Add, "Add", 0, -1},
};

const KindName& compound(sym::Kind k) {
  for (const KindName& c : kCompound) {
    if (c.kind == k) return c;
  }
  INGOT_THROW(InternalError, "[save] expression kind {} has no archive name", int(k));
}

sym::Expr build(sym::Kind kind, const std::vector<sym::Expr>& a) {
  switch (kind) {
    case sym::Kind::Mul: {
      sym::Expr r = a[0];
      for (size_t i = 1; i < a.size(); ++i) r = sym::mul(r, a[i]);
      return r;
    }
    case sym::Kind::FloorDiv:
      return sym::floordiv(a[0], a[1]);
    case sym::Kind::Mod:
      return sym::mod(a[0], a[1]);
    case sym::Kind::Min:
      return sym::min(a[0], a[1]);
    case sym::Kind::Max:
      return sym::max(a[0], a[1]);
    case sym::Kind::Eq:
      return sym::eq(a[0], a[1]);
    case sym::Kind::Ne:
      return sym::ne(a[0], a[1]);
    case sym::Kind::Lt:
      return sym::lt(a[0], a[1]);
    case sym::Kind::Le:
      return sym::le(a[0], a[1]);
    case sym::Kind::And:
    case sym::Kind::Or: {
      sym::Expr r = a[0];
      for (size_t i = 1; i < a.size(); ++i) {
        r = kind == sym::Kind::And ? sym::logical_and(r, a[i]) : sym::logical_or(r, a[i]);
      }
      return r;
    }
    case sym::Kind::Not:
      return sym::logical_not(a[0]);
    default:
      break;
  }
  INGOT_THROW(InternalError, "[load] no constructor for expression kind {}", int(kind));
}

}  // namespace

Json expr_to_json(const sym::Expr& e) {
  switch (e.kind()) {
    case sym::Kind::Integer:
      return e.value();
    case sym::Kind::Boolean:
      return e.value() != 0;
    case sym::Kind::Symbol:
      return e.name();
    case sym::Kind::Add: {
      Json terms = Json::array();
      for (size_t i = 0; i < e->args.size(); ++i)
        terms.push_back(Json::array({e->coeffs[i], expr_to_json(e->args[i])}));
      return Json{{"op", "Add"}, {"const", e->value}, {"terms", std::move(terms)}};
    }
    default: {
      Json args = Json::array();
      for (const sym::Expr& a : e->args) args.push_back(expr_to_json(a));
      return Json{{"op", std::string(compound(e.kind()).name)}, {"args", std::move(args)}};
    }
  }
}

sym::Expr expr_from_json(const JsonView& v, const std::set<std::string>& known, int depth) {
  if (depth > kMaxExprDepth) v.fail("expression nested deeper than {} levels", kMaxExprDepth);
  const Json& j = v.json();
  if (j.is_number_integer()) return sym::integer(v.as_int());
  if (j.is_boolean()) return sym::boolean(v.as_bool());
  if (j.is_string()) {
    const std::string& name = v.as_string();
    if (!known.contains(name)) {
      v.fail("unknown symbol '{}': every symbol must have an entry in range_constraints", name);
    }
    return sym::symbol(name);
  }
  if (!j.is_object())
    v.fail("expected an expression (integer, boolean, symbol name or object), got {}",
           json_kind_name(j));
  const std::string& op = v.get("op").as_string();
  const KindName* kind = nullptr;
  for (const KindName& c : kCompound) {
    if (c.name == op) kind = &c;
  }
  if (!kind) v.fail("unknown expression operator '{}'", op);
  try {
    if (kind->kind == sym::Kind::Add) {
      sym::Expr r = sym::integer(v.get("const").as_int());
      JsonView terms = v.get("terms");
      if (terms.size() > kMaxOperands) terms.fail("more than {} terms in one sum", kMaxOperands);
      for (const JsonView& t : terms.elements()) {
        if (t.size() != 2) t.fail("a term is [coefficient, monomial], got {} elements", t.size());
        sym::Expr m = expr_from_json(t.at(1), known, depth + 1);
        if (m.kind() == sym::Kind::Add) t.at(1).fail("a monomial cannot be a sum");
        r = sym::add(r, sym::mul(sym::integer(t.at(0).as_int()), m));
      }
      return r;
    }
    JsonView args = v.get("args");
    const size_t n = args.size();
    if (n > kMaxOperands) args.fail("more than {} operands in one {}", kMaxOperands, op);
    if (n < size_t(kind->min_args) || (kind->max_args >= 0 && n > size_t(kind->max_args))) {
      args.fail("{} takes {} operands, got {}", op,
                kind->max_args < 0 ? fmt::format("at least {}", kind->min_args)
                                   : std::to_string(kind->max_args),
                n);
    }
    std::vector<sym::Expr> a;
    for (const JsonView& x : args.elements()) {
      a.push_back(expr_from_json(x, known, depth + 1));
      // Products of sums would expand term by term: the canonical form never stores them.
      if (kind->kind == sym::Kind::Mul && a.back().kind() == sym::Kind::Add)
        x.fail("a Mul factor cannot be a sum");
    }
    return build(kind->kind, a);
  } catch (const IoError&) {
    throw;
  } catch (const Error& e) {
    // The constructors reject ill-typed operands, constant division by zero and overflow.
    v.fail("invalid expression: {}", e.what());
  }
}

}  // namespace ingot::archive
