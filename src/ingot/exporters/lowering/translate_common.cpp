#include "ingot/exporters/lowering/translate_common.h"

#include <fmt/format.h>

#include <cmath>

namespace ingot::exporters::lowering {

sym::Expr normalize_index(const sym::Expr& index, const sym::Expr& size) {
  if (index.is_integer() && index.value() < 0) return sym::add(index, size);
  return index;
}

std::vector<int64_t> swap_permutation(size_t rank, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(i);
  if (rank > 0)
    std::swap(perm[size_t(normalize_dim(dim0, rank))], perm[size_t(normalize_dim(dim1, rank))]);
  return perm;
}

std::vector<int64_t> squeeze_axes(const NodeArguments& cx) {
  const auto& in = cx.in_info(0).sizes;
  std::vector<int64_t> candidates;
  if (cx.num_args() == 1) {
    for (size_t d = 0; d < in.size(); ++d) candidates.push_back(int64_t(d));
  } else {
    for (int64_t d : cx.ints(1)) candidates.push_back(normalize_dim(d, in.size()));
  }
  std::vector<int64_t> axes;
  for (int64_t d : candidates) {
    if (size_t(d) < in.size() && in[size_t(d)].is_integer() && in[size_t(d)].value() == 1)
      axes.push_back(d);
  }
  if (axes.size() != in.size() - cx.out_rank())
    cx.unsupported("squeezing a dim whose size is symbolic");
  return axes;
}

DType compare_dtype(const NodeArguments& cx, bool other_is_tensor) {
  const DType a = cx.in_dtype(0);
  if (other_is_tensor) {
    const DType b = cx.in_dtype(1);
    if (cx.in_rank(1) == 0 && cx.in_rank(0) > 0 && is_floating(a) == is_floating(b)) return a;
    if (cx.in_rank(0) == 0 && cx.in_rank(1) > 0 && is_floating(a) == is_floating(b)) return b;
    return promote_types(a, b);
  }
  auto v = cx.scalar_value(1);
  const bool fractional = v && std::floor(*v) != *v;
  if (!is_floating(a) && fractional) return DType::F32;
  return a == DType::Bool ? DType::I64 : a;
}

std::vector<std::string> output_names(const ExportedProgram& program) {
  const std::vector<std::string> paths = program.out_spec.leaf_paths("");
  std::vector<std::string> out;
  size_t next = 0;
  for (const OutputSpec& o : program.signature.outputs) {
    if (o.kind != OutputKind::UserOutput) {
      out.push_back("output." + o.target);
      continue;
    }
    std::string s = next < paths.size() ? paths[next] : fmt::format("output_{}", next);
    if (s.empty() || s[0] == '[') s = paths.size() == 1 ? "output" : fmt::format("output_{}", next);
    out.push_back(s);
    ++next;
  }
  return out;
}

}  // namespace ingot::exporters::lowering
