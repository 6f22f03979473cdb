// The ShapeEnv-backed implementation of core's SymNodeImpl: what makes SymInt / SymBool
// symbolic during export.
//
// A node is (ShapeEnv*, simplified Expr). Arithmetic on SymInts builds new simplified
// expressions in the same ShapeEnv; SymBool::guard_bool / SymInt::guard_int (and
// `if (a == b)`) ask the ShapeEnv to decide, which records a guard at the given source
// line or throws DataDependentError for unbacked symbols.
//
// Lifetime: the ShapeEnv must outlive every SymInt/SymBool/Tensor made from it (the
// export tracer owns it for the duration of a trace).
#pragma once

#include "ingot/core/sym_int.h"
#include "ingot/sym/shape_env.h"

namespace ingot::sym {

class SymExprNode final : public SymNodeImpl {
 public:
  SymExprNode(ShapeEnv* env, Expr expr);

  ShapeEnv& env() const { return *env_; }
  const Expr& expr() const { return expr_; }

  bool is_bool() const override { return expr_.is_bool(); }
  // The constant the expression is, or is proved to be (range of a single value).
  std::optional<int64_t> maybe_constant() const override;
  std::string str() const override { return expr_.str(); }

  SymNode wrap_int(int64_t v) const override;
  SymNode wrap_bool(bool v) const override;

  SymNode add(const SymNode& o) const override;
  SymNode sub(const SymNode& o) const override;
  SymNode mul(const SymNode& o) const override;
  SymNode floordiv(const SymNode& o) const override;
  SymNode mod(const SymNode& o) const override;
  SymNode min(const SymNode& o) const override;
  SymNode max(const SymNode& o) const override;
  SymNode eq(const SymNode& o) const override;
  SymNode lt(const SymNode& o) const override;
  SymNode le(const SymNode& o) const override;
  SymNode logical_and(const SymNode& o) const override;
  SymNode logical_or(const SymNode& o) const override;
  SymNode logical_not() const override;

  int64_t guard_int(const std::source_location& where) const override;
  bool guard_bool(const std::source_location& where) const override;

 private:
  SymNode make(const Expr& e) const;
  const Expr& other(const SymNode& o) const;

  ShapeEnv* env_;
  Expr expr_;
};

// A SymInt over `e` in `env` (a plain SymInt when e simplifies to a constant).
SymInt make_symint(ShapeEnv& env, const Expr& e);
SymBool make_symbool(ShapeEnv& env, const Expr& e);
// A new backed size symbol with example value `hint` (0 and 1 specialise to plain ints;
// see ShapeEnv::SymbolOptions).
SymInt create_symint(ShapeEnv& env, int64_t hint, ShapeEnv::SymbolOptions options = {},
                     std::source_location where = std::source_location::current());
// A new unbacked size (range [0, inf)), e.g. for new_dynamic_size().
SymInt create_unbacked_size(ShapeEnv& env,
                            std::source_location where = std::source_location::current());
// The expression of a SymInt / SymBool (constants for plain values).
Expr expr_of(const SymInt& v);
Expr expr_of(const SymBool& v);

}  // namespace ingot::sym
