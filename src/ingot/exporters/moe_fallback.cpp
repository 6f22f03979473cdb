#include "ingot/exporters/moe_fallback.h"

#include "ingot/nn/moe.h"

namespace ingot::exporters {

OpImpl dense_moe_experts_patch(OpImpl /*original*/) {
  return [](const OpArgs& a) -> std::vector<Tensor> {
    return {nn::moe_experts_dense(a.tensor(0), a.tensor(1), a.tensor(2), a.tensor_list(3),
                                  a.tensor_list(4), a.tensor_list(5), a.string(6))};
  };
}

}  // namespace ingot::exporters
