// In-place arithmetic (add_, sub_, mul_, div_, masked_fill_): each computes its
// functional twin and writes the result into self. Export records the twin and
// functionalises the write (export/tracer.h).
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

// Defines `schema` (which writes argument 0) as "run `functional`, copy into self".
OpDef inplace_of(const char* schema, const char* functional) {
  std::string twin = functional;
  return define_op(schema)
      .shape([twin](const OpArgs& a) {
        const OpDef& f = OpRegistry::instance().get(twin);
        std::vector<OutputMeta> m = f.shape_fn(normalize_args(f, a.values()));
        const Tensor& self = a.tensor(0);
        bool same = m.at(0).sizes.size() == self.sym_sizes().size();
        for (size_t i = 0; same && i < m[0].sizes.size(); ++i) {
          same = bool(m[0].sizes[i] == self.sym_sizes()[i]);
        }
        INGOT_CHECK(same, ShapeError,
                    "[{}] the result shape {} differs from self's {}; an in-place op cannot "
                    "change its target's shape",
                    a.name(), shape_str(m[0].sizes), self.shape_string());
        return std::vector<OutputMeta>{{self.dtype(), self.sym_sizes()}};
      })
      .cpu([twin](const OpArgs& a, std::span<const Tensor> out) {
        const OpDef& f = OpRegistry::instance().get(twin);
        Tensor result = eager_call(normalize_args(f, a.values())).at(0);
        cpu::copy_cast(out[0], result);
      });
}

const OpRegistrar kAdd(inplace_of(
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "add.Tensor"));
const OpRegistrar kAddS(inplace_of(
    "add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", "add.Scalar"));
const OpRegistrar kSub(inplace_of(
    "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", "sub.Tensor"));
const OpRegistrar kMul(inplace_of("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                                  "mul.Tensor"));
const OpRegistrar kMulS(inplace_of("mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                                   "mul.Scalar"));
const OpRegistrar kDiv(inplace_of("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                                  "div.Tensor"));
const OpRegistrar kDivS(inplace_of("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                                   "div.Scalar"));
const OpRegistrar kMaskedFill(
    inplace_of("masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
               "masked_fill.Scalar"));

const OpHandle kAddOp("add_.Tensor"), kAddScalarOp("add_.Scalar"), kSubOp("sub_.Tensor"),
    kMulOp("mul_.Tensor"), kMulScalarOp("mul_.Scalar"), kMaskedFillOp("masked_fill_.Scalar");

}  // namespace

Tensor add_(const Tensor& self, const Tensor& other, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kAddOp({self, other, alpha})[0];
}
Tensor add_(const Tensor& self, Scalar other, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kAddScalarOp({self, other, alpha})[0];
}
Tensor sub_(const Tensor& self, const Tensor& other, Scalar alpha, std::source_location where) {
  CallSiteScope call_site(where);
  return kSubOp({self, other, alpha})[0];
}
Tensor mul_(const Tensor& self, const Tensor& other, std::source_location where) {
  CallSiteScope call_site(where);
  return kMulOp({self, other})[0];
}
Tensor mul_(const Tensor& self, Scalar other, std::source_location where) {
  CallSiteScope call_site(where);
  return kMulScalarOp({self, other})[0];
}
Tensor masked_fill_(const Tensor& self, const Tensor& mask, Scalar value,
                    std::source_location where) {
  CallSiteScope call_site(where);
  return kMaskedFillOp({self, mask, value})[0];
}

}  // namespace ingot
