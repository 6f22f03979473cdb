#include <cstring>
#include "ingot/core/sym_int.h"

#include <algorithm>

#include "ingot/core/error.h"

namespace ingot {

namespace {
thread_local std::source_location t_last_user_location;
thread_local bool t_has_last_user_location = false;
thread_local bool t_tracking = false;

bool is_engine_file(const char* file) {
  for (const char* dir : {"/ingot/core/", "/ingot/ops/", "/ingot/sym/", "/ingot/export/"}) {
    if (std::strstr(file, dir) != nullptr) return true;
  }
  return false;
}
}  // namespace

void note_user_location(const std::source_location& where) {
  if (!t_tracking || is_engine_file(where.file_name())) return;
  t_last_user_location = where;
  t_has_last_user_location = true;
}

LocationTracking::LocationTracking() : previous_(t_tracking) {
  t_tracking = true;
  t_has_last_user_location = false;
}
LocationTracking::~LocationTracking() { t_tracking = previous_; }

std::source_location last_user_location(const std::source_location& fallback) {
  return t_has_last_user_location ? t_last_user_location : fallback;
}
namespace {

// Wrap a (possibly plain) operand as a node of the same kind as `like`.
SymNode as_node(const SymInt& v, const SymNode& like) {
  return v.is_symbolic() ? v.node() : like->wrap_int(v.expect_int());
}
SymNode as_node(const SymBool& v, const SymNode& like) {
  return v.is_symbolic() ? v.node() : like->wrap_bool(*v.maybe_bool());
}

template <typename Result, typename Operand, typename PlainFn, typename NodeFn>
Result binary(const Operand& a, const Operand& b, PlainFn plain, NodeFn symbolic) {
  if (!a.is_symbolic() && !b.is_symbolic()) return Result(plain());
  const SymNode& like = a.is_symbolic() ? a.node() : b.node();
  return Result(symbolic(as_node(a, like), as_node(b, like)));
}

}  // namespace

int64_t floordiv_int(int64_t a, int64_t b) {
  INGOT_CHECK(b != 0, ValueError, "[floordiv] division by zero");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t mod_int(int64_t a, int64_t b) { return a - floordiv_int(a, b) * b; }

SymInt::SymInt(SymNode node) : node_(std::move(node)) {
  INGOT_INTERNAL_ASSERT(node_ && !node_->is_bool());
  // An expression that folded to a constant is a plain value again (fast path, and
  // is_concrete() stays truthful).
  if (auto c = node_->maybe_constant()) {
    value_ = *c;
    node_ = nullptr;
  }
}

void SymInt::throw_symbolic_not_int() const {
  INGOT_THROW(ValueError, "[SymInt] size '{}' is symbolic here; a concrete value was required",
              str());
}

std::optional<int64_t> SymInt::maybe_int() const {
  if (!node_) return value_;
  return node_->maybe_constant();
}

int64_t SymInt::guard_int(const std::source_location& where) const {
  return node_ ? node_->guard_int(where) : value_;
}

std::string SymInt::str() const { return node_ ? node_->str() : std::to_string(value_); }

SymInt operator+(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return a.value_ + b.value_; },
                        [](const SymNode& x, const SymNode& y) { return x->add(y); });
}
SymInt operator-(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return a.value_ - b.value_; },
                        [](const SymNode& x, const SymNode& y) { return x->sub(y); });
}
SymInt operator*(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return a.value_ * b.value_; },
                        [](const SymNode& x, const SymNode& y) { return x->mul(y); });
}
SymInt floordiv(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return floordiv_int(a.value_, b.value_); },
                        [](const SymNode& x, const SymNode& y) { return x->floordiv(y); });
}
SymInt operator%(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return mod_int(a.value_, b.value_); },
                        [](const SymNode& x, const SymNode& y) { return x->mod(y); });
}
SymInt sym_min(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return std::min(a.value_, b.value_); },
                        [](const SymNode& x, const SymNode& y) { return x->min(y); });
}
SymInt sym_max(const SymInt& a, const SymInt& b) {
  return binary<SymInt>(a, b, [&] { return std::max(a.value_, b.value_); },
                        [](const SymNode& x, const SymNode& y) { return x->max(y); });
}

SymBool operator==(const SymInt& a, const SymInt& b) {
  return binary<SymBool>(a, b, [&] { return a.value_ == b.value_; },
                         [](const SymNode& x, const SymNode& y) { return x->eq(y); });
}
SymBool operator!=(const SymInt& a, const SymInt& b) { return !(a == b); }
SymBool operator<(const SymInt& a, const SymInt& b) {
  return binary<SymBool>(a, b, [&] { return a.value_ < b.value_; },
                         [](const SymNode& x, const SymNode& y) { return x->lt(y); });
}
SymBool operator<=(const SymInt& a, const SymInt& b) {
  return binary<SymBool>(a, b, [&] { return a.value_ <= b.value_; },
                         [](const SymNode& x, const SymNode& y) { return x->le(y); });
}
SymBool operator>(const SymInt& a, const SymInt& b) { return b < a; }
SymBool operator>=(const SymInt& a, const SymInt& b) { return b <= a; }

SymBool::SymBool(SymNode node) : node_(std::move(node)) {
  INGOT_INTERNAL_ASSERT(node_ && node_->is_bool());
  if (auto c = node_->maybe_constant()) {
    value_ = *c != 0;
    node_ = nullptr;
  }
}

std::optional<bool> SymBool::maybe_bool() const {
  if (!node_) return value_;
  auto c = node_->maybe_constant();
  if (!c) return std::nullopt;
  return *c != 0;
}

std::string SymBool::str() const {
  return node_ ? node_->str() : (value_ ? "True" : "False");
}

bool SymBool::guard_bool(const std::source_location& where) const {
  return node_ ? node_->guard_bool(where) : value_;
}

SymBool operator&&(const SymBool& a, const SymBool& b) {
  return binary<SymBool>(a, b, [&] { return a.value_ && b.value_; },
                         [](const SymNode& x, const SymNode& y) { return x->logical_and(y); });
}
SymBool operator||(const SymBool& a, const SymBool& b) {
  return binary<SymBool>(a, b, [&] { return a.value_ || b.value_; },
                         [](const SymNode& x, const SymNode& y) { return x->logical_or(y); });
}
SymBool SymBool::operator!() const {
  return node_ ? SymBool(node_->logical_not()) : SymBool(!value_);
}

}  // namespace ingot
