#include "ingot/sym/shape_env.h"

#include <algorithm>
#include <string_view>

#include "ingot/core/sym_int.h"

namespace ingot::sym {

std::string where_str(const std::source_location& where) {
  std::string_view file = where.file_name();
  if (size_t slash = file.rfind('/'); slash != std::string_view::npos) file = file.substr(slash + 1);
  return fmt::format("{}:{}", file, where.line());
}

std::string Guard::str() const {
  return fmt::format("{}  (at {})", condition().str(), where_str(where));
}

std::string RuntimeAssert::str() const {
  return fmt::format("{}  (at {})", expr.str(), where_str(where));
}

ShapeEnv::UserLocationScope::UserLocationScope(ShapeEnv& env, std::source_location user_line)
    : env_(env) {
  env_.user_locations_.push_back(user_line);
}
ShapeEnv::UserLocationScope::~UserLocationScope() {
  env_.user_locations_.pop_back();
}

// --- symbols -----------------------------------------------------------------------------

Expr ShapeEnv::new_symbol(const std::string& name, std::optional<int64_t> hint, ValueRange range,
                          std::source_location where) {
  INGOT_CHECK(!symbols_.count(name), ValueError,
              "[sym] a symbol named '{}' already exists in this ShapeEnv", name);
  INGOT_CHECK(!range.empty(), ValueError, "[sym] empty range {} for new symbol '{}'", range.str(),
              name);
  Expr s = symbol(name);
  symbols_.emplace(name, SymbolInfo{s, hint, range, where});
  order_.push_back(name);
  return s;
}

Expr ShapeEnv::create_symbol(int64_t hint, SymbolOptions options, std::source_location where) {
  INGOT_CHECK(options.range.contains(hint), ValueError,
              "[sym] example value {} is outside the range {} of the new symbol (at {})", hint,
              options.range.str(), where_str(where));
  ValueRange range = options.range;
  if (options.specialize_zero_one) {
    if (hint == 0 || hint == 1) return integer(hint);
    range = range.intersect(ValueRange::at_least(2));
  }
  std::string name;
  if (options.name) {
    name = *options.name;
  } else {
    do name = fmt::format("s{}", next_backed_++);
    while (symbols_.count(name));
  }
  return new_symbol(name, hint, range, where);
}

Expr ShapeEnv::create_unbacked_symint(ValueRange range, std::source_location where) {
  std::string name;
  do name = fmt::format("u{}", next_unbacked_++);
  while (symbols_.count(name));
  return new_symbol(name, std::nullopt, range, where);
}

void ShapeEnv::check_is_size(const Expr& e, std::source_location where) {
  check(ge(e, integer(0)), where);
}

const SymbolInfo& ShapeEnv::symbol_info(const Expr& s) const {
  auto it = s.is_symbol() ? symbols_.find(s.name()) : symbols_.end();
  INGOT_CHECK(it != symbols_.end(), ValueError, "[sym] '{}' is not a symbol of this ShapeEnv",
              s.str());
  return it->second;
}

SymbolInfo& ShapeEnv::info(const Expr& s) {
  return const_cast<SymbolInfo&>(symbol_info(s));
}

std::vector<Expr> ShapeEnv::symbols() const {
  std::vector<Expr> out;
  for (const std::string& n : order_) out.push_back(symbols_.at(n).symbol);
  return out;
}

// --- simplification and proof ------------------------------------------------------------

Expr ShapeEnv::apply_replacements(const Expr& e) const {
  if (replacements_.empty()) return e;
  return substitute(e, [&](const Expr& s) -> std::optional<Expr> {
    auto it = replacements_.find(s);
    if (it == replacements_.end()) return std::nullopt;
    return it->second;
  });
}

// The range of an already simplified expression: interval arithmetic over symbol
// ranges, tightened by linear facts whose lhs - rhs differs from e by a constant.
ValueRange ShapeEnv::bound_simplified(const Expr& e) const {
  ValueRange r = sym::bound(e, [&](const Expr& s) {
    auto it = symbols_.find(s.name());
    return it == symbols_.end() ? ValueRange::all() : it->second.range;
  });
  if (e.is_bool() || e.is_integer()) return r;
  for (const auto& [l, known] : linear_facts_) {
    if (Expr c = sub(e, l); c.is_integer()) {  // e = l + c
      r = r.intersect(known + ValueRange::exactly(c.value()));
    } else if (Expr c2 = add(e, l); c2.is_integer()) {  // e = c2 - l
      r = r.intersect(ValueRange::exactly(c2.value()) + -known);
    }
  }
  return r;
}

namespace {
bool is_relation(Kind k) {
  return k == Kind::Eq || k == Kind::Ne || k == Kind::Lt || k == Kind::Le;
}
}  // namespace

// One node of simplify(): children are already rewritten.
Expr ShapeEnv::range_rewrite(const Expr& e) const {
  auto decide = [&](const Expr& cond) -> Truth {
    if (cond.is_boolean()) return cond.value() ? Truth::True : Truth::False;
    for (const Expr& f : facts_) {
      if (f == cond) return Truth::True;
      if (f == logical_not(cond)) return Truth::False;
    }
    if (is_relation(cond.kind())) {
      return truth_of(relation_range(cond.kind(), bound_simplified(difference(cond))));
    }
    return truth_of(bound_simplified(cond));
  };
  const auto& a = e->args;
  switch (e.kind()) {
    case Kind::Min:
    case Kind::Max: {
      // Whichever order is provable decides: Min(a, b) = a when a <= b, b when b <= a.
      const bool is_min = e.kind() == Kind::Min;
      if (decide(le(a[0], a[1])) == Truth::True) return is_min ? a[0] : a[1];
      if (decide(le(a[1], a[0])) == Truth::True) return is_min ? a[1] : a[0];
      return e;
    }
    case Kind::FloorDiv:
    case Kind::Mod:
      // 0 <= a < b: a // b == 0 and a % b == a.
      if (decide(ge(a[0], integer(0))) == Truth::True && decide(lt(a[0], a[1])) == Truth::True) {
        return e.kind() == Kind::FloorDiv ? integer(0) : a[0];
      }
      return e;
    default:
      if (e.is_bool() && !e.is_boolean()) {
        Truth t = decide(e);
        if (t != Truth::Unknown) return boolean(t == Truth::True);
      }
      return e;
  }
}

Expr ShapeEnv::simplify(const Expr& e) const {
  return transform(apply_replacements(e), [&](const Expr& x) { return range_rewrite(x); });
}

Truth ShapeEnv::prove(const Expr& condition) const {
  INGOT_CHECK(condition.is_bool(), ValueError, "[sym] prove expects a condition, got '{}'",
              condition.str());
  Expr s = simplify(condition);
  if (s.is_boolean()) return s.value() ? Truth::True : Truth::False;
  return Truth::Unknown;
}

ValueRange ShapeEnv::bound(const Expr& e) const {
  return bound_simplified(simplify(e));
}

// --- decisions ---------------------------------------------------------------------------

// "model.cpp:42", plus the line that asked when a user scope attributes it elsewhere.
std::string ShapeEnv::user_where(const std::source_location& where) const {
  std::source_location user = attribute(where);
  if (user.line() == where.line() && std::string_view(user.file_name()) == where.file_name()) {
    return where_str(where);
  }
  return fmt::format("{} (inside {})", where_str(user), where_str(where));
}

void ShapeEnv::throw_data_dependent(const Expr& e, const Expr& original,
                                    const std::source_location& where) const {
  std::string unbacked;
  for (const Expr& s : free_symbols(e)) {
    auto it = symbols_.find(s.name());
    if (it != symbols_.end() && it->second.backed()) continue;
    if (!unbacked.empty()) unbacked += ", ";
    if (it == symbols_.end()) {
      unbacked += fmt::format("{} (unknown to this ShapeEnv)", s.str());
    } else {
      unbacked += fmt::format("{} in {} (created at {})", s.str(), it->second.range.str(),
                              where_str(it->second.created_at));
    }
  }
  std::string fix;
  if (e.is_bool()) {
    fix = fmt::format(
        "if both outcomes can happen, branch with cond(...) so both paths are traced; if you "
        "know which one holds, state it before this line with check({}) or check({})",
        e.str(), logical_not(e).str());
  } else {
    fix =
        "state what you know about it with check(...) (e.g. bounds) before this line, or "
        "keep the value symbolic instead of asking for a concrete int";
  }
  throw DataDependentError(
      fmt::format("[sym] could not decide the data-dependent expression {}{} at {}: it depends on "
                  "values only known at run time ({}), which have no example value. Fix: {}.",
                  e.str(),
                  original == e ? std::string() : fmt::format(" (from {})", original.str()),
                  user_where(where), unbacked, fix),
      e);
}

bool ShapeEnv::evaluate_guard(const Expr& condition, std::source_location where) {
  INGOT_CHECK(condition.is_bool(), ValueError,
              "[sym] evaluate_guard expects a condition, got '{}' (at {})", condition.str(),
              where_str(where));
  Expr s = simplify(condition);
  if (s.is_boolean()) return s.value() != 0;  // proved: no guard needed
  if (!has_hint(s)) throw_data_dependent(s, condition, where);
  const bool value = size_hint(s, where) != 0;
  guards_.push_back(Guard{s, value, attribute(where), where});
  add_fact(value ? s : simplify(logical_not(s)));
  return value;
}

int64_t ShapeEnv::evaluate_int(const Expr& e, std::source_location where) {
  INGOT_CHECK(!e.is_bool(), ValueError, "[sym] evaluate_int expects an integer, got '{}'", e.str());
  Expr s = simplify(e);
  if (s.is_integer()) return s.value();
  if (ValueRange r = bound_simplified(s); r.is_singleton()) return r.lo;
  if (!has_hint(s)) throw_data_dependent(s, e, where);
  const int64_t v = size_hint(s, where);
  Expr g = eq(s, integer(v));
  guards_.push_back(Guard{g, true, attribute(where), where});
  add_fact(g);
  return v;
}

void ShapeEnv::check(const Expr& condition, std::source_location where) {
  INGOT_CHECK(condition.is_bool(), ValueError, "[check] expects a condition, got '{}' (at {})",
              condition.str(), where_str(where));
  Expr s = simplify(condition);
  INGOT_CHECK(!(s.is_boolean() && s.value() == 0), ValueError,
              "[check] condition {} is always false here (at {})", condition.str(),
              user_where(where));
  if (s.is_boolean()) return;  // already known: nothing to assert
  INGOT_CHECK(!has_hint(s) || size_hint(s, where) != 0, ValueError,
              "[check] condition {} does not hold for the example inputs (at {})", s.str(),
              user_where(where));
  asserts_.push_back(RuntimeAssert{s, attribute(where)});
  add_fact(s);
}

// --- facts -------------------------------------------------------------------------------

void ShapeEnv::narrow(const Expr& s, ValueRange r) {
  SymbolInfo& i = info(s);
  ValueRange n = i.range.intersect(r);
  INGOT_CHECK(!n.empty(), ValueError,
              "[sym] conflicting facts: {} must be in {} and in {} at the same time", s.str(),
              i.range.str(), r.str());
  i.range = n;
  if (n.is_singleton() && !replacements_.count(s)) add_replacement(s, integer(n.lo));
}

void ShapeEnv::add_replacement(const Expr& s, const Expr& value) {
  Expr v = apply_replacements(value);
  replacements_[s] = v;
  for (auto& [_, r] : replacements_) {  // keep every replacement fully resolved
    r = substitute(r, [&](const Expr& x) -> std::optional<Expr> {
      return x == s ? std::optional(v) : std::nullopt;
    });
  }
  for (auto& [l, _] : linear_facts_) l = apply_replacements(l);
  for (Expr& f : facts_) f = apply_replacements(f);
  // Facts that became constants say nothing more.
  std::erase_if(linear_facts_, [](const auto& f) { return f.first.is_integer(); });
  std::erase_if(facts_, [](const Expr& f) { return f.is_boolean(); });
  // What was known about s now constrains what replaced it.
  const ValueRange known = info(s).range;
  if (v.is_integer()) {
    INGOT_CHECK(known.contains(v.value()), ValueError,
                "[sym] conflicting facts: {} == {} but its range is {}", s.str(), v.value(),
                known.str());
    info(s).range = ValueRange::exactly(v.value());
    return;
  }
  Linear l = to_linear(v);  // v = t + c  ->  t in known - c
  if (l.terms.size() == 1 && l.terms[0].second == 1 && l.terms[0].first.is_symbol() &&
      symbols_.count(l.terms[0].first.name())) {
    narrow(l.terms[0].first, known + ValueRange::exactly(-l.constant));
  }
}

void ShapeEnv::add_fact(const Expr& f) {
  if (f.is_boolean()) return;
  if (f.kind() == Kind::And) {
    for (const Expr& x : f->args) add_fact(simplify(x));
    return;
  }
  facts_.push_back(f);
  if (!is_relation(f.kind())) return;
  const Expr d = difference(f);  // the fact says: d OP 0
  const Linear l = to_linear(d);
  // A bound on a single symbol: k*s + c OP 0.
  const bool single = l.terms.size() == 1 && l.terms[0].first.is_symbol() &&
                      symbols_.count(l.terms[0].first.name());
  if (f.kind() == Kind::Eq) {
    // Eliminate a symbol with coefficient +-1 that occurs nowhere else: prefer unbacked
    // symbols, then the newest, so u0 := s0 and s1 := s0.
    std::optional<std::pair<Expr, int64_t>> pick;
    for (const auto& [m, k] : l.terms) {
      if (!m.is_symbol() || (k != 1 && k != -1) || !symbols_.count(m.name())) continue;
      bool elsewhere = false;
      for (const auto& [o, _] : l.terms) {
        if (!(o == m)) {
          for (const Expr& x : free_symbols(o)) elsewhere = elsewhere || x == m;
        }
      }
      if (elsewhere) continue;
      // Prefer eliminating unbacked symbols, then the newest (largest in order).
      auto better = [&](const Expr& x, const Expr& y) {
        const bool ux = !info(x).backed(), uy = !info(y).backed();
        return ux != uy ? ux : compare(x, y) > 0;
      };
      if (!pick || better(m, pick->first)) pick = std::pair(m, k);
    }
    if (pick) {
      const auto& [m, k] = *pick;
      Expr value = mul(integer(-k), sub(d, mul(integer(k), m)));  // m = -(d - k*m)/k
      if (!info(m).backed() || has_hint(value)) {
        add_replacement(m, value);
        return;
      }
    }
    linear_facts_.emplace_back(d, ValueRange::exactly(0));
    return;
  }
  if (f.kind() == Kind::Ne) {
    if (single && l.constant % l.terms[0].second == 0) {
      const Expr& s = l.terms[0].first;
      const int64_t v = -l.constant / l.terms[0].second;  // s != v
      ValueRange r = info(s).range;
      if (r.lo == v)
        narrow(s, ValueRange::at_least(v + 1));
      else if (r.hi == v)
        narrow(s, ValueRange::between(ValueRange::kNegInf, v - 1));
    }
    return;
  }
  // Lt / Le: d <= b.
  const int64_t b = f.kind() == Kind::Lt ? -1 : 0;
  if (single) {
    const auto& [s, k] = l.terms[0];
    const int64_t rhs = b - l.constant;  // k*s <= rhs
    if (k > 0)
      narrow(s, ValueRange::between(ValueRange::kNegInf, floordiv_int(rhs, k)));
    else
      narrow(s, ValueRange::at_least(-floordiv_int(-rhs, k)));  // s >= ceil(rhs/k)
    return;
  }
  linear_facts_.emplace_back(d, ValueRange::between(ValueRange::kNegInf, b));
}

// --- values ------------------------------------------------------------------------------

bool ShapeEnv::has_hint(const Expr& e) const {
  for (const Expr& s : free_symbols(apply_replacements(e))) {
    auto it = symbols_.find(s.name());
    if (it == symbols_.end() || !it->second.backed()) return false;
  }
  return true;
}

int64_t ShapeEnv::size_hint(const Expr& e, std::source_location where) const {
  Expr s = apply_replacements(e);
  if (!has_hint(s)) throw_data_dependent(s, e, where);
  return sym::evaluate(s, [&](const Expr& x) { return *symbols_.at(x.name()).hint; });
}

int64_t ShapeEnv::evaluate(const Expr& e, const Bindings& bindings) const {
  return sym::evaluate(e, [&](const Expr& s) -> int64_t {
    if (auto it = bindings.find(s.name()); it != bindings.end()) return it->second;
    auto r = replacements_.find(s);
    INGOT_CHECK(r != replacements_.end(), ValueError,
                "[sym] no value bound for symbol {} while evaluating {}", s.str(), e.str());
    return evaluate(r->second, bindings);
  });
}

}  // namespace ingot::sym
