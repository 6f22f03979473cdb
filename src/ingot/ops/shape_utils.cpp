#include "ingot/ops/shape_utils.h"

#include <optional>

namespace ingot {
namespace {

int category(DType t) {
  if (t == DType::Bool) return 0;
  if (is_integral(t)) return 1;
  return 2;
}

// torch's combine_categories: the higher-priority class wins unless the lower one is
// of a higher category.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (category(*higher) == 2) return higher;
  if (*higher == DType::Bool || category(*lower) == 2) return promote_types(*higher, *lower);
  return higher;
}

void update(std::optional<DType>& slot, DType t) { slot = slot ? promote_types(*slot, t) : t; }

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Dim counted from the right.
    const SymInt* x = i < a.size() ? &a[a.size() - 1 - i] : nullptr;
    const SymInt* y = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
    SymInt& o = out[n - 1 - i];
    if (!x) o = *y;
    else if (!y) o = *x;
    else if (x->maybe_int() == 1) o = *y;
    else if (y->maybe_int() == 1) o = *x;
    else {
      INGOT_CHECK(bool(*x == *y), ShapeError,
                  "[{}] shapes {} and {} cannot be broadcast: dim {} is {} vs {}", op,
                  shape_str(a), shape_str(b), -int64_t(i) - 1, x->str(), y->str());
      o = *x;
    }
  }
  return out;
}

DType result_type(std::span<const Value> operands) {
  std::optional<DType> dim_result, zero_dim_result, number_result;
  for (const Value& v : operands) {
    switch (v.kind()) {
      case Value::Kind::Tensor:
        if (!v.tensor().defined()) break;
        update(v.tensor().dim() > 0 ? dim_result : zero_dim_result, v.tensor().dtype());
        break;
      case Value::Kind::Scalar: update(number_result, v.scalar().default_dtype()); break;
      case Value::Kind::Int: update(number_result, DType::I64); break;
      case Value::Kind::Float: update(number_result, DType::F32); break;
      case Value::Kind::Bool: update(number_result, DType::Bool); break;
      default: break;
    }
  }
  auto result = combine(dim_result, combine(zero_dim_result, number_result));
  INGOT_CHECK(result.has_value(), ValueError, "[result_type] no tensor or number operands");
  return *result;
}

int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op) {
  int64_t bound = std::max<int64_t>(rank, 1);
  INGOT_CHECK(dim >= -bound && dim < bound, ValueError,
              "[{}] dim {} is out of range for a tensor of rank {}; expected a dim in [{}, {}]",
              op, dim, rank, -bound, bound - 1);
  return dim < 0 ? dim + bound : dim;
}

void check_floating(const Tensor& t, std::string_view op, std::string_view arg) {
  INGOT_CHECK(is_floating(t.dtype()), DTypeError,
              "[{}] argument '{}' must be a floating tensor (float16, bfloat16, float32, "
              "float64), got {}",
              op, arg, t.dtype());
}

}  // namespace ingot
