// ingot::silu_mul(gate, up) = silu(gate) * up (functional/fused.h): the fused activation of a
// gated MLP, which the runtime's rewrite (runtime/passes/fuse_silu_mul.h) puts in place of
// mul(silu(gate), up). One pass over memory; computed in float and rounded once, so a
// 16-bit result may differ from the two-op form by one rounding. Decomposes to those two
// ops for every consumer without a kernel.
#include "ingot/ops/cpu/activation.h"
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/fused.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

std::vector<OutputMeta> silu_mul_shape(const OpArgs& a) {
  const Tensor& gate = a.tensor(0);
  const Tensor& up = a.tensor(1);
  check_floating(gate, a.name(), "gate");
  INGOT_CHECK(up.dtype() == gate.dtype(), DTypeError,
              "[{}] gate is {} but up is {}; both must have one dtype", a.name(), gate.dtype(),
              up.dtype());
  INGOT_CHECK(up.dim() == gate.dim(), ShapeError, "[{}] gate {} and up {} differ in shape",
              a.name(), gate.shape_string(), up.shape_string());
  for (int64_t d = 0; d < gate.dim(); ++d) {
    INGOT_CHECK(bool(gate.sym_size(d) == up.sym_size(d)), ShapeError,
                "[{}] gate {} and up {} differ in dim {}", a.name(), gate.shape_string(),
                up.shape_string(), d);
  }
  return {{gate.dtype(), gate.sym_sizes()}};
}

const OpRegistrar kSiluMul(define_op("ingot::silu_mul(Tensor gate, Tensor up) -> Tensor")
                               .shape(silu_mul_shape)
                               .cpu([](const OpArgs& a, std::span<const Tensor> out) {
                                 const Tensor gate = contiguous(a.tensor(0)),
                                              up = contiguous(a.tensor(1));
                                 if (out[0].is_contiguous()) return cpu::silu_mul(out[0], gate, up);
                                 const Tensor y = Tensor::empty(gate.sizes(), gate.dtype());
                                 cpu::silu_mul(y, gate, up);
                                 cpu::copy_cast(out[0], y);
                               })
                               .decompose([](const OpArgs& a) {
                                 return std::vector<Tensor>{mul(silu(a.tensor(0)), a.tensor(1))};
                               }));

const OpHandle kSiluMulOp("ingot::silu_mul");

}  // namespace

Tensor silu_mul(const Tensor& gate, const Tensor& up, std::source_location where) {
  CallSiteScope call_site(where);
  return kSiluMulOp({gate, up})[0];
}

}  // namespace ingot
