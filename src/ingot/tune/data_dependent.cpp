#include "ingot/tune/data_dependent.h"

#include "ingot/core/error.h"
#include "ingot/export/control_flow.h"
#include "ingot/ops/functional.h"

namespace ingot::tune {

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

}  // namespace ingot::tune
