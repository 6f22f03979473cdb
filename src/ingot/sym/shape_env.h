// ShapeEnv: the symbols of one export, what is known about them, and every decision the
// trace took on them (torch.fx.experimental.symbolic_shapes.ShapeEnv, natively).
//
//  * Backed symbols (s0, s1, ...) stand for input sizes and carry the example value
//    ("hint"). Deciding a condition on them uses the hint and records a Guard: the trace
//    is valid only for inputs where the guard holds.
//  * Unbacked symbols (u0, u1, ...) come from data (item(), nonzero(),
//    new_dynamic_size()); they carry only a range. A condition on them that ranges and
//    known facts cannot decide is a DataDependentError: the user must branch with cond
//    or state the fact with check().
//  * Every question is answered in three ways: proved true, proved false, or unknown.
//    Only an unknown answer needs a hint (and so records a guard).
//  * Facts (decided guards and checks) narrow symbol ranges (s0 > 5 -> s0 in [6, inf)),
//    and an equality between symbols becomes a replacement (after Eq(s1, s0) holds, s1
//    is rewritten to s0 everywhere, so later shapes compare equal structurally).
//
// Not thread-safe: one ShapeEnv belongs to one trace.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <unordered_map>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/sym/expr.h"
#include "ingot/sym/value_ranges.h"

namespace ingot::sym {

// A condition on unbacked symbols that could not be decided at trace time.
class DataDependentError : public Error {
 public:
  DataDependentError(std::string message, Expr expr)
      : Error(std::move(message)), expr_(std::move(expr)) {}
  const Expr& expr() const { return expr_; }

 private:
  Expr expr_;
};

// "file.cpp:42" of a source location (the file's base name).
std::string where_str(const std::source_location& where);

// A decision the trace took on backed symbols: `expr` evaluated to `value` at `where`
// (the user's line when a UserLocationScope is active, else the line that asked), and
// `origin`, the line that asked (e.g. inside an op's shape function).
struct Guard {
  Expr expr;
  bool value = true;
  std::source_location where;
  std::source_location origin;

  // The condition that must hold for the trace to be valid: expr, or its negation.
  Expr condition() const { return value ? expr : logical_not(expr); }
  std::string str() const;  // "Eq(s0, s1)  (at model.cpp:42)"
};

// A fact stated with check(): asserted at run time, assumed true during the trace.
struct RuntimeAssert {
  Expr expr;
  std::source_location where;
  std::string str() const;
};

struct SymbolInfo {
  Expr symbol;
  std::optional<int64_t> hint;  // backed symbols only
  ValueRange range;             // narrowed by facts as the trace goes
  std::source_location created_at;
  bool backed() const { return hint.has_value(); }
};

// Symbol name -> value, for evaluating guards and asserts at run time.
using Bindings = std::unordered_map<std::string, int64_t>;

class ShapeEnv {
 public:
  struct SymbolOptions {
    ValueRange range = ValueRange::at_least(0);  // sizes are >= 0
    std::optional<std::string> name = {};        // default s<N>
    // Like torch, example sizes 0 and 1 are not made symbolic: the result is the
    // constant, because programs treat them specially (broadcasting, empty tensors).
    // Symbols created with the option get range >= 2 (a later input of 0 or 1 would
    // take different paths). Set false to keep 0/1 symbolic (then no such assumption).
    bool specialize_zero_one = true;
  };

  ShapeEnv() = default;
  ShapeEnv(const ShapeEnv&) = delete;
  ShapeEnv& operator=(const ShapeEnv&) = delete;

  // A backed symbol for an input size with example value `hint`; an integer constant
  // when the hint is 0 or 1 and specialize_zero_one is on. Throws ValueError when the
  // hint is outside the range or the name is taken.
  Expr create_symbol(int64_t hint, SymbolOptions options,
                     std::source_location where = std::source_location::current());
  Expr create_symbol(int64_t hint, std::source_location where = std::source_location::current()) {
    return create_symbol(hint, SymbolOptions{}, where);
  }
  // An unbacked symbol u<N> (no example value) with the given range. Sizes produced by
  // data (nonzero(), new_dynamic_size()) use create_unbacked_size().
  Expr create_unbacked_symint(ValueRange range = ValueRange::all(),
                              std::source_location where = std::source_location::current());
  Expr create_unbacked_size(std::source_location where = std::source_location::current()) {
    return create_unbacked_symint(ValueRange::at_least(0), where);
  }
  // torch._check_is_size: narrows an unbacked symbol's range to [0, inf).
  void check_is_size(const Expr& e, std::source_location where = std::source_location::current());

  // --- simplification and proof -------------------------------------------------------

  // Applies replacements, then range-based rules: Min/Max whose order is provable,
  // FloorDiv/Mod of a provably smaller non-negative dividend, relations that are
  // provable become True/False.
  Expr simplify(const Expr& e) const;
  // Proved True / proved False / Unknown, using symbol ranges and the recorded facts.
  Truth prove(const Expr& condition) const;
  // The range of an integer expression (after simplification).
  ValueRange bound(const Expr& e) const;

  // --- decisions --------------------------------------------------------------------

  // Decides a boolean expression: by proof when possible (no guard), otherwise by hints
  // (backed symbols only), recording a Guard at `where`. Unbacked and undecidable:
  // DataDependentError naming the expression and `where`, suggesting cond / check.
  bool evaluate_guard(const Expr& condition,
                      std::source_location where = std::source_location::current());
  // Decides an integer expression's value (guard_int): constant if provable, else the
  // hint, recording the guard Eq(e, value) (which specialises the symbols involved).
  int64_t evaluate_int(const Expr& e, std::source_location where = std::source_location::current());
  // torch._check: states that `condition` holds. Recorded as a runtime assert and used
  // as a fact from now on. Throws ValueError if it is provably false or false for the
  // example values.
  void check(const Expr& condition, std::source_location where = std::source_location::current());

  // --- values -----------------------------------------------------------------------

  // The value for the example inputs; DataDependentError if it involves unbacked
  // symbols.
  int64_t size_hint(const Expr& e,
                    std::source_location where = std::source_location::current()) const;
  bool has_hint(const Expr& e) const;
  // The value with symbols bound at run time (a symbol missing from `bindings` is
  // resolved through its replacement; otherwise ValueError naming it).
  int64_t evaluate(const Expr& e, const Bindings& bindings) const;

  // --- attribution ------------------------------------------------------------------

  // While alive, decisions taken on this ShapeEnv (guards, errors, asserts) are
  // attributed to `user_line`: the tracer opens one per user call so that a guard taken
  // inside an op's shape function names the model's source line. Scopes nest.
  class UserLocationScope {
   public:
    UserLocationScope(ShapeEnv& env, std::source_location user_line);
    ~UserLocationScope();
    UserLocationScope(const UserLocationScope&) = delete;
    UserLocationScope& operator=(const UserLocationScope&) = delete;

   private:
    ShapeEnv& env_;
  };
  // The innermost user location, or `where` when no scope is active.
  std::source_location attribute(const std::source_location& where) const {
    return user_locations_.empty() ? where : user_locations_.back();
  }

  // --- inspection ---------------------------------------------------------------------

  const std::vector<Guard>& guards() const { return guards_; }
  const std::vector<RuntimeAssert>& runtime_asserts() const { return asserts_; }
  const SymbolInfo& symbol_info(const Expr& symbol) const;
  ValueRange range(const Expr& symbol) const { return symbol_info(symbol).range; }
  // Symbols in creation order.
  std::vector<Expr> symbols() const;
  // Symbol -> what it was replaced by (fully resolved).
  const std::map<Expr, Expr, ExprLess>& replacements() const { return replacements_; }

 private:
  Expr new_symbol(const std::string& name, std::optional<int64_t> hint, ValueRange range,
                  std::source_location where);
  SymbolInfo& info(const Expr& symbol);
  Expr apply_replacements(const Expr& e) const;
  Expr range_rewrite(const Expr& e) const;
  ValueRange bound_simplified(const Expr& e) const;
  // Records that `fact` (simplified) is true: narrows ranges, adds replacements.
  void add_fact(const Expr& fact);
  void narrow(const Expr& symbol, ValueRange r);
  void add_replacement(const Expr& symbol, const Expr& value);
  std::string user_where(const std::source_location& where) const;
  [[noreturn]] void throw_data_dependent(const Expr& e, const Expr& original,
                                         const std::source_location& where) const;

  std::map<std::string, SymbolInfo> symbols_;  // by name
  std::vector<std::string> order_;             // creation order
  int64_t next_backed_ = 0, next_unbacked_ = 0;
  std::map<Expr, Expr, ExprLess> replacements_;
  // Relations known true that are not simple bounds, as (lhs - rhs, its known range).
  std::vector<std::pair<Expr, ValueRange>> linear_facts_;
  std::vector<Expr> facts_;  // other known-true conditions (exact match)
  std::vector<Guard> guards_;
  std::vector<RuntimeAssert> asserts_;
  std::vector<std::source_location> user_locations_;
};

}  // namespace ingot::sym
