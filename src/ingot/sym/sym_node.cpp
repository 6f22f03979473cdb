#include "ingot/sym/sym_node.h"

namespace ingot::sym {

SymExprNode::SymExprNode(ShapeEnv* env, Expr expr) : env_(env), expr_(std::move(expr)) {
  INGOT_INTERNAL_ASSERT(env_ != nullptr);
}

std::optional<int64_t> SymExprNode::maybe_constant() const {
  if (expr_.is_constant()) return expr_.value();
  Expr s = env_->simplify(expr_);  // facts learned since this node was made may decide it
  if (s.is_constant()) return s.value();
  if (s.is_bool()) return std::nullopt;
  ValueRange r = env_->bound(s);
  if (r.is_singleton()) return r.lo;
  return std::nullopt;
}

SymNode SymExprNode::make(const Expr& e) const {
  return std::make_shared<SymExprNode>(env_, env_->simplify(e));
}

const Expr& SymExprNode::other(const SymNode& o) const {
  const auto* n = dynamic_cast<const SymExprNode*>(o.get());
  INGOT_CHECK(n != nullptr, InternalError,
              "[sym] cannot combine '{}' with a symbolic value from another implementation", str());
  INGOT_CHECK(n->env_ == env_, ValueError,
              "[sym] '{}' and '{}' belong to different ShapeEnvs (different exports)", str(),
              n->str());
  return n->expr_;
}

SymNode SymExprNode::wrap_int(int64_t v) const {
  return make(integer(v));
}
SymNode SymExprNode::wrap_bool(bool v) const {
  return make(boolean(v));
}

SymNode SymExprNode::add(const SymNode& o) const {
  return make(sym::add(expr_, other(o)));
}
SymNode SymExprNode::sub(const SymNode& o) const {
  return make(sym::sub(expr_, other(o)));
}
SymNode SymExprNode::mul(const SymNode& o) const {
  return make(sym::mul(expr_, other(o)));
}
SymNode SymExprNode::floordiv(const SymNode& o) const {
  return make(sym::floordiv(expr_, other(o)));
}
SymNode SymExprNode::mod(const SymNode& o) const {
  return make(sym::mod(expr_, other(o)));
}
SymNode SymExprNode::min(const SymNode& o) const {
  return make(sym::min(expr_, other(o)));
}
SymNode SymExprNode::max(const SymNode& o) const {
  return make(sym::max(expr_, other(o)));
}
SymNode SymExprNode::eq(const SymNode& o) const {
  return make(sym::eq(expr_, other(o)));
}
SymNode SymExprNode::lt(const SymNode& o) const {
  return make(sym::lt(expr_, other(o)));
}
SymNode SymExprNode::le(const SymNode& o) const {
  return make(sym::le(expr_, other(o)));
}
SymNode SymExprNode::logical_and(const SymNode& o) const {
  return make(sym::logical_and(expr_, other(o)));
}
SymNode SymExprNode::logical_or(const SymNode& o) const {
  return make(sym::logical_or(expr_, other(o)));
}
SymNode SymExprNode::logical_not() const {
  return make(sym::logical_not(expr_));
}

int64_t SymExprNode::guard_int(const std::source_location& where) const {
  return env_->evaluate_int(expr_, where);
}

bool SymExprNode::guard_bool(const std::source_location& where) const {
  return env_->evaluate_guard(expr_, where);
}

SymInt make_symint(ShapeEnv& env, const Expr& e) {
  Expr s = env.simplify(e);
  INGOT_CHECK(!s.is_bool(), ValueError, "[sym] make_symint of a condition '{}'", s.str());
  if (s.is_integer()) return SymInt(s.value());
  return SymInt(std::make_shared<SymExprNode>(&env, s));
}

SymBool make_symbool(ShapeEnv& env, const Expr& e) {
  Expr s = env.simplify(e);
  INGOT_CHECK(s.is_bool(), ValueError, "[sym] make_symbool of an integer '{}'", s.str());
  if (s.is_boolean()) return SymBool(s.value() != 0);
  return SymBool(std::make_shared<SymExprNode>(&env, s));
}

SymInt create_symint(ShapeEnv& env, int64_t hint, ShapeEnv::SymbolOptions options,
                     std::source_location where) {
  return make_symint(env, env.create_symbol(hint, std::move(options), where));
}

SymInt create_unbacked_size(ShapeEnv& env, std::source_location where) {
  return make_symint(env, env.create_unbacked_size(where));
}

namespace {
template <typename V>
Expr expr_of_node(const V& v) {
  const auto* n = dynamic_cast<const SymExprNode*>(v.node().get());
  INGOT_CHECK(n != nullptr, InternalError, "[sym] '{}' is not a ShapeEnv expression", v.str());
  return n->expr();
}
}  // namespace

Expr expr_of(const SymInt& v) {
  return v.is_symbolic() ? expr_of_node(v) : integer(v.expect_int());
}

Expr expr_of(const SymBool& v) {
  return v.is_symbolic() ? expr_of_node(v) : boolean(*v.maybe_bool());
}

}  // namespace ingot::sym
