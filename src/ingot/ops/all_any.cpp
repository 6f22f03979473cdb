// all / any: whether every / some element is true (non-zero; NaN counts as true), over the
// whole tensor. The result is a 0-d bool tensor; all of nothing is true, any of nothing is
// false, as in torch.
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/predicates.h"

namespace ingot {
namespace {

std::vector<OutputMeta> scalar_bool_shape(const OpArgs&) {
  return {{DType::Bool, {}}};
}

// Reads self as truth values (a contiguous bool copy) and folds them.
CpuKernel fold_kernel(bool is_all) {
  return [is_all](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor& self = a.tensor(0);
    Tensor truth = Tensor::empty(self.sizes(), DType::Bool);
    cpu::copy_cast(truth, self);
    const bool* p = truth.data<bool>();
    const int64_t n = truth.numel();
    bool result = is_all;
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] != is_all) {
        result = !is_all;
        break;
      }
    }
    *out[0].data<bool>() = result;
  };
}

const OpRegistrar kAll(
    define_op("all(Tensor self) -> Tensor").shape(scalar_bool_shape).cpu(fold_kernel(true)));
const OpRegistrar kAny(
    define_op("any(Tensor self) -> Tensor").shape(scalar_bool_shape).cpu(fold_kernel(false)));

const OpHandle kAllOp("all"), kAnyOp("any");

}  // namespace

Tensor all(const Tensor& self, std::source_location where) {
  CallSiteScope call_site(where);
  return kAllOp({self})[0];
}
Tensor any(const Tensor& self, std::source_location where) {
  CallSiteScope call_site(where);
  return kAnyOp({self})[0];
}

}  // namespace ingot
