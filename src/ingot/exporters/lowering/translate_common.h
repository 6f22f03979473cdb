// What the ONNX and OpenVINO translation tables compute the same way before they spell an
// op (a backend's translate_*.cpp keeps only the op spellings): dims and indices
// normalised, the dims a squeeze removes, the dtype an op computes in, the names of the
// lowered graph's outputs, where each symbol can be read from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ingot/core/dtype.h"
#include "ingot/exporters/lowering/node_arguments.h"
#include "ingot/ir/program.h"

namespace ingot::exporters::lowering {

// A dim argument against a tensor of `rank` dims (Python's negative dims; a 0-d tensor
// wraps as one dim, as torch does).
inline int64_t normalize_dim(int64_t d, size_t rank) {
  return d < 0 ? d + int64_t(std::max<size_t>(rank, 1)) : d;
}

// An index expression against a dim of `size` (Python's negative indices).
sym::Expr normalize_index(const sym::Expr& index, const sym::Expr& size);

// The permutation transpose.int(dim0, dim1) applies to a tensor of `rank` dims.
std::vector<int64_t> swap_permutation(size_t rank, int64_t dim0, int64_t dim1);

// squeeze / squeeze.dim / squeeze.dims: the dims of size 1 the output lost (the shape
// function decided which); unsupported() when a squeezed size is symbolic. The backend
// spells the squeeze (an empty list: the input itself).
std::vector<int64_t> squeeze_axes(const NodeArguments& cx);

// The type a composite computes in: float for 16-bit floats, as ingot's kernels do (one
// rounding at the end, not one per backend op).
inline DType opmath(DType t) {
  return t == DType::F16 || t == DType::BF16 ? DType::F32 : t;
}

// The dtype a comparison of argument 0 with argument 1 (a tensor when `other_is_tensor`,
// else a Scalar) computes in: torch's promotion, a 0-d tensor of the same kind not
// widening a dimensioned one (wrapped numbers).
DType compare_dtype(const NodeArguments& cx, bool other_is_tensor);

// The names a lowering gives the program's outputs, in signature order: user outputs by
// their output path ("logits"; "" / "[i]" -> "output" / "output_i"), mutations as
// "output.<target>".
std::vector<std::string> output_names(const ExportedProgram& program);

// Records `value` as where each symbol among `info`'s sizes is read from (dim d), unless
// the scope has a source for it already.
template <typename Value>
void add_symbol_sources(std::map<std::string, std::pair<Value, int64_t>>& sources,
                        const std::type_identity_t<Value>& value, const ir::ValueInfo& info) {
  for (size_t d = 0; d < info.sizes.size(); ++d) {
    const sym::Expr& e = info.sizes[d];
    if (e.is_symbol() && !sources.contains(e.name()))
      sources.emplace(e.name(), std::pair{value, int64_t(d)});
  }
}

}  // namespace ingot::exporters::lowering
