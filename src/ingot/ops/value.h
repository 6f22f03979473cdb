// Value: one argument of an op call, as the schema types it.
//
// Ops take arguments as a list of Values; the schema (schema.h) says which kind each
// must be. None is the absent optional. Lists of optional tensors (`Tensor?[]`, the
// indices of index_put) hold undefined Tensors for None entries.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/scalar.h"

namespace ingot {

using TensorList = std::vector<Tensor>;
using SymIntList = std::vector<SymInt>;

class Value {
 public:
  enum class Kind { None, Tensor, TensorList, Int, IntList, Float, Bool, Scalar, DType, String };

  Value() = default;  // None
  Value(std::nullopt_t) {}  // NOLINT
  Value(Tensor t) : v_(std::move(t)) {}  // NOLINT: values convert implicitly
  Value(TensorList l) : v_(std::move(l)) {}  // NOLINT
  Value(SymInt i) : v_(std::move(i)) {}  // NOLINT
  Value(int i) : v_(SymInt(i)) {}  // NOLINT
  Value(int64_t i) : v_(SymInt(i)) {}  // NOLINT
  Value(SymIntList l) : v_(std::move(l)) {}  // NOLINT
  Value(const IntShape& l) : v_(to_sym_shape(l)) {}  // NOLINT
  Value(std::initializer_list<int64_t> l) : v_(to_sym_shape(IntShape(l))) {}  // NOLINT
  Value(double f) : v_(f) {}  // NOLINT
  Value(float f) : v_(double(f)) {}  // NOLINT
  Value(bool b) : v_(b) {}  // NOLINT
  Value(Scalar s) : v_(s) {}  // NOLINT
  Value(DType t) : v_(t) {}  // NOLINT
  Value(std::string s) : v_(std::move(s)) {}  // NOLINT
  Value(const char* s) : v_(std::string(s)) {}  // NOLINT
  template <typename T>
  Value(const std::optional<T>& o) {  // NOLINT
    if (o) *this = Value(*o);
  }

  Kind kind() const { return Kind(v_.index()); }
  bool is_none() const { return kind() == Kind::None; }
  bool is(Kind k) const { return kind() == k; }

  // Accessors throw InternalError on a kind mismatch: the dispatcher has already
  // checked arguments against the schema, so a mismatch is a bug in an op definition.
  const Tensor& tensor() const { return get<Tensor>(); }
  const TensorList& tensor_list() const { return get<TensorList>(); }
  const SymInt& sym_int() const { return get<SymInt>(); }
  const SymIntList& int_list() const { return get<SymIntList>(); }
  double f64() const { return get<double>(); }
  bool boolean() const { return get<bool>(); }
  const Scalar& scalar() const { return get<Scalar>(); }
  DType dtype() const { return get<DType>(); }
  const std::string& string() const { return get<std::string>(); }

  std::string str() const;
  static const char* kind_name(Kind k);

 private:
  template <typename T>
  const T& get() const {
    const T* p = std::get_if<T>(&v_);
    INGOT_CHECK(p != nullptr, InternalError, "[Value] holds {}, accessed as another kind",
                kind_name(kind()));
    return *p;
  }

  std::variant<std::monostate, Tensor, TensorList, SymInt, SymIntList, double, bool, Scalar,
               DType, std::string>
      v_;
};

}  // namespace ingot
