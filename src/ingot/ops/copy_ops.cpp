// Copy ops: _to_copy (dtype conversion), clone, copy_ (in-place, broadcasting).
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/views.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

void copy_kernel(const OpArgs& a, std::span<const Tensor> out) { cpu::copy_cast(out[0], a.tensor(0)); }

const OpRegistrar kToCopy(
    define_op("_to_copy(Tensor self, *, ScalarType? dtype=None) -> Tensor")
        .shape([](const OpArgs& a) {
          const Tensor& t = a.tensor(0);
          return std::vector<OutputMeta>{{a.optional_dtype(1).value_or(t.dtype()), t.sym_sizes()}};
        })
        .cpu(copy_kernel));

const OpRegistrar kClone(define_op("clone(Tensor self) -> Tensor")
                             .shape([](const OpArgs& a) {
                               const Tensor& t = a.tensor(0);
                               return std::vector<OutputMeta>{{t.dtype(), t.sym_sizes()}};
                             })
                             .cpu(copy_kernel));

// dst's metadata, after checking src broadcasts to it (copy_ and its functional twin).
std::vector<OutputMeta> copy_shape(const OpArgs& a) {
  const Tensor& dst = a.tensor(0);
  const Tensor& src = a.tensor(1);
  Shape b = broadcast_shapes(dst.sym_sizes(), src.sym_sizes(), a.name());
  bool fits = b.size() == dst.sym_sizes().size();
  for (size_t i = 0; fits && i < b.size(); ++i) fits = bool(b[i] == dst.sym_sizes()[i]);
  INGOT_CHECK(fits, ShapeError,
              "[{}] source of shape {} cannot be broadcast to destination {}", a.name(),
              src.shape_string(), dst.shape_string());
  return std::vector<OutputMeta>{{dst.dtype(), dst.sym_sizes()}};
}

// Functional copy (what export records for copy_): src broadcast to self's shape and
// converted to self's dtype.
const OpRegistrar kCopyFunctional(
    define_op("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor")
        .shape(copy_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) { cpu::copy_cast(out[0], a.tensor(1)); }));

const OpRegistrar kCopy(
    define_op("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)")
        .shape(copy_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor& src = a.tensor(1);
          // An overlapping source (e.g. copying a tensor into a shifted view of itself)
          // is read from a snapshot so the result does not depend on loop order.
          Tensor safe_src = src.shares_storage_with(out[0]) ? clone(src) : src;
          cpu::copy_cast(out[0], safe_src);
        }));

const OpHandle kToCopyOp("_to_copy"), kCloneOp("clone"), kCopyOp("copy_");

}  // namespace

Tensor contiguous(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return t.is_contiguous() ? t : clone(t);
}
Tensor clone(const Tensor& t, std::source_location where) {
  CallSiteScope call_site(where);
  return kCloneOp({t})[0];
}
Tensor to(const Tensor& t, DType dtype, std::source_location where) {
  CallSiteScope call_site(where);
  return t.dtype() == dtype ? t : kToCopyOp({t, dtype})[0];
}
Tensor copy_(const Tensor& dst, const Tensor& src, std::source_location where) {
  CallSiteScope call_site(where);
  return kCopyOp({dst, src})[0];
}

}  // namespace ingot
