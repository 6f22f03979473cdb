// SymInt / SymBool: sizes that are either a plain int64 or a symbolic expression.
//
// Eager tensors only ever hold plain values (the fast path: no allocation, no virtual
// call). During export, sizes marked dynamic are symbolic: they point at a SymNode whose
// implementation lives in sym/ (a ShapeEnv-backed expression). core/ only defines the
// seam, SymNodeImpl, so that lower layers never depend on sym/.
//
// Invariant: a SymInt holds a node only while its value is unknown — an expression that
// folds to a constant is stored as a plain int — and arithmetic on plain values stays
// plain.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>

namespace ingot {

class SymNodeImpl;
using SymNode = std::shared_ptr<const SymNodeImpl>;

// Interface implemented by sym/ for symbolic integers and booleans. Binary methods
// receive the other operand already wrapped as a node (wrap_int / wrap_bool).
class SymNodeImpl {
 public:
  virtual ~SymNodeImpl() = default;

  virtual bool is_bool() const = 0;
  // The value when the expression is a known constant.
  virtual std::optional<int64_t> maybe_constant() const = 0;
  virtual std::string str() const = 0;

  virtual SymNode wrap_int(int64_t v) const = 0;
  virtual SymNode wrap_bool(bool v) const = 0;

  virtual SymNode add(const SymNode& o) const = 0;
  virtual SymNode sub(const SymNode& o) const = 0;
  virtual SymNode mul(const SymNode& o) const = 0;
  virtual SymNode floordiv(const SymNode& o) const = 0;
  virtual SymNode mod(const SymNode& o) const = 0;
  virtual SymNode min(const SymNode& o) const = 0;
  virtual SymNode max(const SymNode& o) const = 0;
  virtual SymNode eq(const SymNode& o) const = 0;
  virtual SymNode lt(const SymNode& o) const = 0;
  virtual SymNode le(const SymNode& o) const = 0;
  virtual SymNode logical_and(const SymNode& o) const = 0;
  virtual SymNode logical_or(const SymNode& o) const = 0;
  virtual SymNode logical_not() const = 0;

  // Decide the value now (by hint or by proof), recording a guard where the value came
  // from a hint. `where` is the user's source line that forced the decision.
  virtual int64_t guard_int(const std::source_location& where) const = 0;
  virtual bool guard_bool(const std::source_location& where) const = 0;
};

class SymBool;

// The last user source line seen on this thread by APIs that take one (Tensor::sym_size,
// op calls). Used to attribute decisions taken where no line can be passed. Only
// recorded while a LocationTracking scope is active (the export tracer), and only for
// lines outside ingot's own engine (core/, ops/, sym/, export/).
void note_user_location(const std::source_location& where);
class LocationTracking {
 public:
  LocationTracking();
  ~LocationTracking();
  LocationTracking(const LocationTracking&) = delete;
  LocationTracking& operator=(const LocationTracking&) = delete;

 private:
  bool previous_;
};
// That line, or `fallback` when none was noted.
std::source_location last_user_location(const std::source_location& fallback);

class SymInt {
 public:
  SymInt(int64_t v = 0) : value_(v) {}  // NOLINT: ints convert implicitly, as in c10
  SymInt(int v) : value_(v) {}          // NOLINT
  explicit SymInt(SymNode node);

  bool is_symbolic() const { return node_ != nullptr; }
  bool is_concrete() const { return node_ == nullptr; }
  const SymNode& node() const { return node_; }

  // The plain value. Throws if symbolic: use guard_int() to decide a symbolic value.
  // Inline: sizes are read this way on every kernel call at run time.
  int64_t expect_int() const {
    if (node_) throw_symbolic_not_int();
    return value_;
  }
  // The plain value, or the constant a symbolic expression folded to.
  std::optional<int64_t> maybe_int() const;
  // Plain value, or the symbolic value decided by hint (recording a guard).
  int64_t guard_int(const std::source_location& where = std::source_location::current()) const;

  std::string str() const;

  friend SymInt operator+(const SymInt& a, const SymInt& b);
  friend SymInt operator-(const SymInt& a, const SymInt& b);
  friend SymInt operator*(const SymInt& a, const SymInt& b);
  // Floor division and modulo with Python semantics (result takes divisor's sign).
  friend SymInt floordiv(const SymInt& a, const SymInt& b);
  friend SymInt operator%(const SymInt& a, const SymInt& b);
  friend SymInt sym_min(const SymInt& a, const SymInt& b);
  friend SymInt sym_max(const SymInt& a, const SymInt& b);
  SymInt operator-() const { return SymInt(0) - *this; }
  SymInt& operator+=(const SymInt& o) { return *this = *this + o; }
  SymInt& operator*=(const SymInt& o) { return *this = *this * o; }

  friend SymBool operator==(const SymInt& a, const SymInt& b);
  friend SymBool operator!=(const SymInt& a, const SymInt& b);
  friend SymBool operator<(const SymInt& a, const SymInt& b);
  friend SymBool operator<=(const SymInt& a, const SymInt& b);
  friend SymBool operator>(const SymInt& a, const SymInt& b);
  friend SymBool operator>=(const SymInt& a, const SymInt& b);

 private:
  [[noreturn]] void throw_symbolic_not_int() const;

  int64_t value_ = 0;
  SymNode node_;
};

class SymBool {
 public:
  SymBool(bool v = false) : value_(v) {}  // NOLINT
  explicit SymBool(SymNode node);

  bool is_symbolic() const { return node_ != nullptr; }
  const SymNode& node() const { return node_; }
  std::optional<bool> maybe_bool() const;
  std::string str() const;

  // Plain value, or decide the symbolic one (recording a guard). Branching in C++ on a
  // size comparison goes through here, which is what makes shape guards visible.
  bool guard_bool(const std::source_location& where = std::source_location::current()) const;
  // `if (a > b)` cannot pass a source line, so the decision is attributed to the last
  // user line the API saw on this thread (a size query or an op call, usually the same
  // statement).
  explicit operator bool() const {
    return guard_bool(last_user_location(std::source_location::current()));
  }

  friend SymBool operator&&(const SymBool& a, const SymBool& b);
  friend SymBool operator||(const SymBool& a, const SymBool& b);
  SymBool operator!() const;

 private:
  bool value_ = false;
  SymNode node_;
};

// Integer floor division/modulo on plain values with Python semantics.
int64_t floordiv_int(int64_t a, int64_t b);
int64_t mod_int(int64_t a, int64_t b);

}  // namespace ingot
