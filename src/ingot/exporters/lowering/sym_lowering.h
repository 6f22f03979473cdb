// The symbolic-integer lowering shared by the graph backends (ONNX, OpenVINO): a size
// expression of the program (sym::Expr: symbols, + * // % min max, comparisons, and / or /
// not) becomes backend ops computing it at run time from the shapes of the values that
// carry its symbols. The walk over the expression, its memoisation and its semantics
// (sizes are non-negative, so truncating division is Python's floor division) live here
// once; a backend supplies only the spelling of each op (SymSpelling) and its scopes
// (where a lowered value is visible, and how a symbol is read from a shape).
//
// Every value is a [1] tensor: int64 for integers, bool for conditions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "ingot/core/error.h"
#include "ingot/sym/expr.h"

namespace ingot::exporters::lowering {

enum class IntOp { kAdd, kMul, kFloorDiv, kMod, kMin, kMax };
enum class CmpOp { kEq, kNe, kLt, kLe };
enum class LogicOp { kAnd, kOr };

// How a backend spells the ops (Value: its handle of a graph value).
template <typename Value>
class SymSpelling {
 public:
  virtual ~SymSpelling() = default;
  virtual Value int_constant(int64_t v) = 0;  // int64 [1]
  virtual Value bool_constant(bool v) = 0;    // bool [1]
  virtual Value int_op(IntOp op, const Value& a, const Value& b) = 0;
  virtual Value compare(CmpOp op, const Value& a, const Value& b) = 0;
  virtual Value logical(LogicOp op, const Value& a, const Value& b) = 0;
  virtual Value logical_not(const Value& a) = 0;
  virtual Value bool_to_int(const Value& a) = 0;  // false / true -> 0 / 1
};

// The backend's scopes: an expression lowered earlier and visible from the current scope
// (imported into it where the backend needs that), recording a new one in the current
// scope, and a symbol read from the shape of a value that carries it.
template <typename Value>
struct SymScopes {
  std::function<std::optional<Value>(const sym::Expr&)> find;
  std::function<void(const sym::Expr&, const Value&)> remember;
  std::function<Value(const sym::Expr&)> symbol;
};

template <typename Value>
class SymLowering {
 public:
  SymLowering(SymSpelling<Value>& spell, SymScopes<Value> scopes)
      : spell_(spell), scopes_(std::move(scopes)) {}

  // `e` as a value, lowered once per scope: symbols through the backend, conditions as
  // bool [1], everything else as int64 [1].
  Value value(const sym::Expr& e) {
    if (e.is_symbol()) return scopes_.symbol(e);
    if (e.is_bool()) return condition(e);  // memoised there
    if (std::optional<Value> v = scopes_.find(e)) return *v;
    Value v = integer(e);
    scopes_.remember(e, v);
    return v;
  }

  // `e` as int64 [1] (a condition becomes 0 / 1).
  Value integer(const sym::Expr& e) {
    const auto two = [&](IntOp op) {
      return spell_.int_op(op, value(e->args[0]), value(e->args[1]));
    };
    switch (e.kind()) {
      case sym::Kind::Integer:
        return spell_.int_constant(e.value());
      case sym::Kind::Symbol:
        return scopes_.symbol(e);
      case sym::Kind::Add: {
        const sym::Linear lin = sym::to_linear(e);
        std::optional<Value> acc;
        for (const auto& [monomial, coeff] : lin.terms) {
          Value term = value(monomial);
          if (coeff != 1) term = spell_.int_op(IntOp::kMul, term, spell_.int_constant(coeff));
          acc = acc ? spell_.int_op(IntOp::kAdd, *acc, term) : term;
        }
        if (!acc) return spell_.int_constant(lin.constant);
        if (lin.constant != 0)
          acc = spell_.int_op(IntOp::kAdd, *acc, spell_.int_constant(lin.constant));
        return *acc;
      }
      case sym::Kind::Mul: {
        std::optional<Value> acc;
        for (const sym::Expr& f : e->args)
          acc = acc ? spell_.int_op(IntOp::kMul, *acc, value(f)) : value(f);
        INGOT_CHECK(acc.has_value(), InternalError, "[lowering] a product without factors");
        return *acc;
      }
      case sym::Kind::FloorDiv:  // sizes are non-negative: truncation is floor division
        return two(IntOp::kFloorDiv);
      case sym::Kind::Mod:
        return two(IntOp::kMod);
      case sym::Kind::Min:
        return two(IntOp::kMin);
      case sym::Kind::Max:
        return two(IntOp::kMax);
      default:  // a condition used as an integer
        return spell_.bool_to_int(condition(e));
    }
  }

  // `e` as bool [1] (an integer is a condition when != 0), lowered once per scope.
  Value condition(const sym::Expr& e) {
    if (std::optional<Value> v = scopes_.find(e)) return *v;
    const auto two = [&](CmpOp op) {
      return spell_.compare(op, value(e->args[0]), value(e->args[1]));
    };
    std::optional<Value> v;
    switch (e.kind()) {
      case sym::Kind::Boolean:
        v = spell_.bool_constant(e.value() != 0);
        break;
      case sym::Kind::Eq:
        v = two(CmpOp::kEq);
        break;
      case sym::Kind::Ne:
        v = two(CmpOp::kNe);
        break;
      case sym::Kind::Lt:
        v = two(CmpOp::kLt);
        break;
      case sym::Kind::Le:
        v = two(CmpOp::kLe);
        break;
      case sym::Kind::And:
      case sym::Kind::Or: {
        const LogicOp op = e.kind() == sym::Kind::And ? LogicOp::kAnd : LogicOp::kOr;
        for (const sym::Expr& a : e->args) {
          Value x = condition(a);
          v = v ? spell_.logical(op, *v, x) : x;
        }
        INGOT_CHECK(v.has_value(), InternalError, "[lowering] an and / or without operands");
        break;
      }
      case sym::Kind::Not:
        v = spell_.logical_not(condition(e->args[0]));
        break;
      default:  // an integer used as a condition: != 0
        v = spell_.compare(CmpOp::kNe, value(e), spell_.int_constant(0));
    }
    scopes_.remember(e, *v);
    return *v;
  }

 private:
  SymSpelling<Value>& spell_;
  SymScopes<Value> scopes_;
};

}  // namespace ingot::exporters::lowering
