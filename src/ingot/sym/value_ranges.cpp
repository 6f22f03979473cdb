// Interval arithmetic with saturating infinities.
#include "ingot/sym/value_ranges.h"

#include <algorithm>
#include <initializer_list>

#include "ingot/core/error.h"
#include "ingot/core/sym_int.h"

namespace ingot::sym {
namespace {

constexpr int64_t kNegInf = ValueRange::kNegInf;
constexpr int64_t kPosInf = ValueRange::kPosInf;

bool is_inf(int64_t v) {
  return v == kNegInf || v == kPosInf;
}

// a + b where an infinite operand wins and finite overflow saturates.
int64_t sat_add(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t sat_neg(int64_t a) {
  if (a == kNegInf) return kPosInf;
  if (a == kPosInf) return kNegInf;
  return -a;
}

// a * b with 0 * inf = 0 (the bound is attained by the finite factor 0).
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const bool negative = (a < 0) != (b < 0);
  int64_t r;
  if (is_inf(a) || is_inf(b) || __builtin_mul_overflow(a, b, &r)) {
    return negative ? kNegInf : kPosInf;
  }
  return r;
}

// floor(a / b) for b > 0 (b may be +inf: the limit is 0, or -1 for negative a).
int64_t sat_floordiv_pos(int64_t a, int64_t b) {
  if (b == kPosInf) {
    if (a == kPosInf) return kPosInf;  // inf / inf: no bound
    if (a == kNegInf) return kNegInf;
    return a >= 0 ? 0 : -1;
  }
  if (is_inf(a)) return a;
  return floordiv_int(a, b);
}

ValueRange hull(std::initializer_list<int64_t> v) {
  return {std::min(v), std::max(v)};
}

}  // namespace

ValueRange ValueRange::intersect(const ValueRange& o) const {
  return {std::max(lo, o.lo), std::min(hi, o.hi)};
}

std::string ValueRange::str() const {
  std::string l = lo == kNegInf ? std::string("(-inf") : fmt::format("[{}", lo);
  std::string h = hi == kPosInf ? std::string("inf)") : fmt::format("{}]", hi);
  return fmt::format("{}, {}", l, h);
}

ValueRange operator+(const ValueRange& a, const ValueRange& b) {
  return {sat_add(a.lo, b.lo), sat_add(a.hi, b.hi)};
}

ValueRange operator-(const ValueRange& a) {
  return {sat_neg(a.hi), sat_neg(a.lo)};
}

ValueRange operator*(const ValueRange& a, const ValueRange& b) {
  return hull({sat_mul(a.lo, b.lo), sat_mul(a.lo, b.hi), sat_mul(a.hi, b.lo), sat_mul(a.hi, b.hi)});
}

ValueRange floordiv(const ValueRange& a, const ValueRange& b) {
  if (b.lo > 0) {
    // floor(a/b) is monotone in a and in b (for b > 0), so the corners bound it.
    return hull({sat_floordiv_pos(a.lo, b.lo), sat_floordiv_pos(a.lo, b.hi),
                 sat_floordiv_pos(a.hi, b.lo), sat_floordiv_pos(a.hi, b.hi)});
  }
  if (b.hi < 0) return floordiv(-a, -b);  // floor(a/b) == floor(-a/-b)
  return ValueRange::all();
}

ValueRange mod(const ValueRange& a, const ValueRange& b) {
  if (b.lo > 0) {
    if (a.lo >= 0 && a.hi < b.lo) return a;  // already below every divisor
    return {0, b.hi == kPosInf ? kPosInf : b.hi - 1};
  }
  if (b.hi < 0) return {b.lo == kNegInf ? kNegInf : b.lo + 1, 0};
  return ValueRange::all();
}

ValueRange min(const ValueRange& a, const ValueRange& b) {
  return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
}

ValueRange max(const ValueRange& a, const ValueRange& b) {
  return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Truth truth_of(const ValueRange& r) {
  if (r.lo >= 1) return Truth::True;
  if (r.hi <= 0) return Truth::False;
  return Truth::Unknown;
}

Truth truth_not(Truth t) {
  return t == Truth::Unknown ? t : (t == Truth::True ? Truth::False : Truth::True);
}

ValueRange relation_range(Kind kind, const ValueRange& d) {
  auto decide = [](bool always, bool never) {
    return always ? ValueRange::exactly(1) : never ? ValueRange::exactly(0) : ValueRange::boolean();
  };
  switch (kind) {
    case Kind::Eq:
      return decide(d.lo == 0 && d.hi == 0, d.lo > 0 || d.hi < 0);
    case Kind::Ne:
      return decide(d.lo > 0 || d.hi < 0, d.lo == 0 && d.hi == 0);
    case Kind::Lt:
      return decide(d.hi < 0, d.lo >= 0);
    case Kind::Le:
      return decide(d.hi <= 0, d.lo > 0);
    default:
      INGOT_THROW(InternalError, "[sym] relation_range of a non-relation");
  }
}

ValueRange bound(const Expr& e, const SymbolRanges& ranges) {
  auto arg = [&](size_t i) { return bound(e->args[i], ranges); };
  switch (e.kind()) {
    case Kind::Integer:
    case Kind::Boolean:
      return ValueRange::exactly(e->value);
    case Kind::Symbol:
      return ranges(e);
    case Kind::Add: {
      ValueRange r = ValueRange::exactly(e->value);
      for (size_t i = 0; i < e->args.size(); ++i) {
        r = r + ValueRange::exactly(e->coeffs[i]) * arg(i);
      }
      return r;
    }
    case Kind::Mul: {
      ValueRange r = ValueRange::exactly(1);
      for (size_t i = 0; i < e->args.size(); ++i) r = r * arg(i);
      return r;
    }
    case Kind::FloorDiv:
      return floordiv(arg(0), arg(1));
    case Kind::Mod:
      return mod(arg(0), arg(1));
    case Kind::Min:
      return min(arg(0), arg(1));
    case Kind::Max:
      return max(arg(0), arg(1));
    case Kind::Eq:
    case Kind::Ne:
    case Kind::Lt:
    case Kind::Le:
      return relation_range(e.kind(), bound(difference(e), ranges));
    case Kind::And: {
      ValueRange r = ValueRange::exactly(1);
      for (size_t i = 0; i < e->args.size(); ++i) r = min(r, arg(i));
      return r;
    }
    case Kind::Or: {
      ValueRange r = ValueRange::exactly(0);
      for (size_t i = 0; i < e->args.size(); ++i) r = max(r, arg(i));
      return r;
    }
    case Kind::Not: {
      ValueRange r = arg(0);
      return {1 - r.hi, 1 - r.lo};
    }
  }
  INGOT_THROW(InternalError, "[sym] unknown expression kind");
}

}  // namespace ingot::sym
