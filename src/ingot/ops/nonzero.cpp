// nonzero: an op whose output size depends on data. Its shape function asks the tracer
// for a new unbacked size; eagerly it counts first and allocates the result itself.
#include "ingot/ops/functional.h"
#include "ingot/ops/registry.h"

namespace ingot {
namespace {

const OpRegistrar kNonzero(
    define_op("nonzero(Tensor self) -> Tensor")
        .shape([](const OpArgs& a) {
          return std::vector<OutputMeta>{{DType::I64, {new_dynamic_size(), SymInt(a.tensor(0).dim())}}};
        })
        .compute([](const OpArgs& a) {
          const Tensor& self = a.tensor(0);
          Tensor values = contiguous(to(self, DType::F64));  // NaN counts as non-zero
          const double* v = values.data<double>();
          const int64_t n = values.numel(), rank = self.dim();
          const IntShape sizes = self.sizes();
          std::vector<int64_t> hits;
          for (int64_t i = 0; i < n; ++i) {
            if (v[i] != 0.0) hits.push_back(i);
          }
          Tensor out = Tensor::empty({int64_t(hits.size()), rank}, DType::I64);
          int64_t* o = out.data<int64_t>();
          for (size_t h = 0; h < hits.size(); ++h) {
            int64_t flat = hits[h];
            for (int64_t d = rank; d-- > 0;) {
              o[int64_t(h) * rank + d] = flat % sizes[size_t(d)];
              flat /= sizes[size_t(d)];
            }
          }
          return std::vector<Tensor>{out};
        }));

const OpHandle kNonzeroOp("nonzero");

}  // namespace

Tensor nonzero(const Tensor& self, std::source_location where) {
  CallSiteScope call_site(where);
  return kNonzeroOp({self})[0];
}

}  // namespace ingot
