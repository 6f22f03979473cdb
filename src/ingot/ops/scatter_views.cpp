// slice_scatter, select_scatter: the functional form of writing into a view,
// `out = self.clone(); out[view] = src`. Functionalisation turns writes through slice and
// select views into these ops. The view's geometry comes from the slice / select ops
// themselves, so the bounds rules are the same.
#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/indexing.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

const OpHandle kSliceView("slice.Tensor"), kSelectView("select.int");

// The view's args: slice_scatter(self, src, dim, start, end, step) -> slice(self, dim,
// start, end, step); select_scatter(self, src, dim, index) -> select(self, dim, index).
std::vector<Value> view_args(const OpArgs& a, const Tensor& self) {
  std::vector<Value> v{self};
  for (size_t i = 2; i < a.size(); ++i) v.push_back(a[i]);
  return v;
}

const OpDef& view_op(const OpArgs& a) {
  return a.op().schema.name == "slice_scatter" ? kSliceView.def() : kSelectView.def();
}

std::vector<OutputMeta> scatter_view_shape(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  const Tensor& src = a.tensor(1);
  const OpDef& view = view_op(a);
  const Shape view_sizes = view.shape_fn(normalize_args(view, view_args(a, self)))[0].sizes;
  bool same = int64_t(view_sizes.size()) == src.dim();
  for (size_t d = 0; same && d < view_sizes.size(); ++d) {
    same = bool(src.sym_size(int64_t(d)) == view_sizes[d]);
  }
  INGOT_CHECK(same, ShapeError,
              "[{}] src of shape {} must have the shape of the {} of self it replaces, {} "
              "(self has shape {})",
              a.name(), src.shape_string(), view.schema.name, shape_str(view_sizes),
              self.shape_string());
  return {OutputMeta{self.dtype(), self.sym_sizes()}};
}

// Copies self, then src into the view of the copy. The view is built by the view op's
// own function, bypassing any interceptor: kernels only run eagerly.
void scatter_view_kernel(const OpArgs& a, std::span<const Tensor> out) {
  cpu::copy_cast(out[0], a.tensor(0));
  const OpDef& view = view_op(a);
  Tensor target = view.view_fn(normalize_args(view, view_args(a, out[0])))[0];
  if (target.numel() > 0) cpu::copy_cast(target, a.tensor(1));
}

const OpRegistrar kSliceScatter(
    define_op("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, "
              "SymInt? end=None, SymInt step=1) -> Tensor")
        .shape(scatter_view_shape)
        .cpu(scatter_view_kernel));
const OpRegistrar kSelectScatter(
    define_op("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor")
        .shape(scatter_view_shape)
        .cpu(scatter_view_kernel));

const OpHandle kSliceScatterOp("slice_scatter"), kSelectScatterOp("select_scatter");

}  // namespace

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim,
                     std::optional<SymInt> start, std::optional<SymInt> end, SymInt step, std::source_location where) {
  CallSiteScope call_site(where);
  return kSliceScatterOp({self, src, dim, Value(start), Value(end), step})[0];
}
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, SymInt index, std::source_location where) {
  CallSiteScope call_site(where);
  return kSelectScatterOp({self, src, dim, index})[0];
}

}  // namespace ingot
