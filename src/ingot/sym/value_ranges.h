// Integer intervals [lo, hi] (either end may be infinite) and interval arithmetic over
// expressions. ShapeEnv uses them to *prove* relations: a relation is decided only when
// every value in the ranges of its symbols agrees; otherwise the answer is Unknown.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "ingot/sym/expr.h"

namespace ingot::sym {

// An interval of integers. The int64 extremes stand for -inf / +inf (a finite value is
// never that large in practice: sizes are far below 2^63). Booleans use [0, 1].
struct ValueRange {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

  int64_t lo = kNegInf;
  int64_t hi = kPosInf;

  static ValueRange all() { return {}; }
  static ValueRange exactly(int64_t v) { return {v, v}; }
  static ValueRange at_least(int64_t v) { return {v, kPosInf}; }
  static ValueRange between(int64_t lo, int64_t hi) { return {lo, hi}; }
  static ValueRange boolean() { return {0, 1}; }

  bool empty() const { return lo > hi; }
  bool is_singleton() const { return lo == hi; }
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool contains(const ValueRange& o) const { return lo <= o.lo && o.hi <= hi; }
  ValueRange intersect(const ValueRange& o) const;

  // "[2, inf)", "(-inf, 5]", "[3, 3]".
  std::string str() const;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

ValueRange operator+(const ValueRange& a, const ValueRange& b);
ValueRange operator-(const ValueRange& a);
ValueRange operator*(const ValueRange& a, const ValueRange& b);
ValueRange floordiv(const ValueRange& a, const ValueRange& b);
ValueRange mod(const ValueRange& a, const ValueRange& b);
ValueRange min(const ValueRange& a, const ValueRange& b);
ValueRange max(const ValueRange& a, const ValueRange& b);

// Three-valued answer of a proof attempt.
enum class Truth { True, False, Unknown };
Truth truth_of(const ValueRange& boolean_range);  // [1,1] True, [0,0] False, else Unknown
Truth truth_not(Truth t);

// The range of an expression given the range of each symbol. Relations get [1, 1] when
// they hold for every value in range, [0, 0] when for none, [0, 1] otherwise; the
// relation is judged on the range of lhs - rhs (so s0 < s0 + 1 is proved).
using SymbolRanges = std::function<ValueRange(const Expr& symbol)>;
ValueRange bound(const Expr& e, const SymbolRanges& ranges);

// The boolean range of `difference OP 0` for a relation kind, given difference's range.
ValueRange relation_range(Kind kind, const ValueRange& difference);

}  // namespace ingot::sym
