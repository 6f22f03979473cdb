#include "ingot/nn/tune/data_dependent.h"

#include "ingot/core/error.h"
#include "ingot/export/control_flow.h"
#include "ingot/ops/functional.h"

namespace ingot::nn::tune {

SymInt tensor_to_symint(const Tensor& t, std::source_location where) {
  INGOT_CHECK(t.defined() && t.has_storage() && t.numel() == 1 && is_integral(t.dtype()),
              ValueError,
              "[tensor_to_symint] expected a one-element integer tensor with data, got {} {} "
              "(at {}:{})",
              t.defined() ? dtype_name(t.dtype()) : "undefined",
              t.defined() ? t.shape_string() : "", where.file_name(), where.line());
  return SymInt(t.item<int64_t>());
}

Tensor symint_to_tensor(const SymInt& n) {
  // sum of n ones: exact for any n >= 0, and expressed through the size alone.
  return sum(ones_symint({n}, DType::I64));
}

void require(const SymBool& condition, const std::function<std::string()>& message,
             std::source_location where) {
  if (std::optional<bool> decided = condition.maybe_bool()) {
    INGOT_CHECK(*decided, ValueError, "{}", message());
    return;
  }
  check(condition, where);
}

}  // namespace ingot::nn::tune
