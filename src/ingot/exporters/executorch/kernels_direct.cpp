// Ops whose portable kernel takes exactly the op's arguments (in the op's order, every
// default spelled out) followed by the outputs (and again as the returns): `add.Tensor(self, other,
// *, alpha)` -> `aten::add.out(self, other, *, alpha, out)`. Views are copies in ExecuTorch's
// portable set (`view` -> `view_copy.out`): every tensor is contiguous and owns its memory.
#include <variant>

#include "ingot/exporters/executorch/kernels.h"

namespace ingot::exporters::executorch {

namespace {

// The node's arguments by kind, then its outputs. `Tensor?[]` lists (index_put) are
// OptionalTensorLists; other tensor lists are TensorLists.
KernelFn direct(std::string kernel, bool optional_tensor_lists = false) {
  return [kernel = std::move(kernel), optional_tensor_lists](KernelContext& k) {
    std::vector<int32_t> args;
    for (size_t i = 0; i < k.num_args(); ++i) {
      const ir::Argument& a = k.node().args[i];
      if (std::holds_alternative<std::monostate>(a))
        args.push_back(k.none());
      else if (std::holds_alternative<ir::TensorRef>(a))
        args.push_back(k.tensor(i));
      else if (std::holds_alternative<ir::OptionalValueList>(a))
        args.push_back(optional_tensor_lists ? k.optional_tensor_list(i) : k.tensor_list(i));
      else if (std::holds_alternative<sym::Expr>(a))
        args.push_back(k.int_(i));
      else if (std::holds_alternative<std::vector<sym::Expr>>(a))
        args.push_back(k.int_list(i));
      else if (std::holds_alternative<double>(a))
        args.push_back(k.double_(i));
      else if (std::holds_alternative<bool>(a))
        args.push_back(k.boolean(i));
      else if (std::holds_alternative<Scalar>(a))
        args.push_back(k.scalar(i));
      else if (std::holds_alternative<DType>(a))
        args.push_back(k.optional_dtype(i));
      else if (std::holds_alternative<std::string>(a))
        args.push_back(k.optional_string(i));
    }
    std::vector<int32_t> outs;
    for (size_t o = 0; o < k.node().outputs.size(); ++o) outs.push_back(k.out(o));
    k.call(kernel, args, outs);
  };
}

const bool kRegistered = [] {
  // op -> kernel: the portable `.out` variant with the same argument list.
  const std::pair<const char*, const char*> same_args[] = {
      // arithmetic
      {"add.Tensor", "aten::add.out"},
      {"add.Scalar", "aten::add.Scalar_out"},
      {"sub.Tensor", "aten::sub.out"},
      {"sub.Scalar", "aten::sub.Scalar_out"},
      {"mul.Tensor", "aten::mul.out"},
      {"mul.Scalar", "aten::mul.Scalar_out"},
      {"div.Tensor", "aten::div.out"},
      {"div.Scalar", "aten::div.Scalar_out"},
      {"div.Tensor_mode", "aten::div.out_mode"},
      {"pow.Tensor_Scalar", "aten::pow.Tensor_Scalar_out"},
      {"pow.Tensor_Tensor", "aten::pow.Tensor_Tensor_out"},
      {"pow.Scalar", "aten::pow.Scalar_out"},
      // unary
      {"abs", "aten::abs.out"},
      {"neg", "aten::neg.out"},
      {"cos", "aten::cos.out"},
      {"sin", "aten::sin.out"},
      {"exp", "aten::exp.out"},
      {"log", "aten::log.out"},
      {"sqrt", "aten::sqrt.out"},
      {"rsqrt", "aten::rsqrt.out"},
      {"sigmoid", "aten::sigmoid.out"},
      {"tanh", "aten::tanh.out"},
      {"relu", "aten::relu.out"},
      {"gelu", "aten::gelu.out"},
      {"isnan", "aten::isnan.out"},
      {"clamp", "aten::clamp.out"},
      {"clamp.Tensor", "aten::clamp.Tensor_out"},
      // comparison and logic
      {"eq.Scalar", "aten::eq.Scalar_out"},
      {"eq.Tensor", "aten::eq.Tensor_out"},
      {"ne.Scalar", "aten::ne.Scalar_out"},
      {"ne.Tensor", "aten::ne.Tensor_out"},
      {"lt.Scalar", "aten::lt.Scalar_out"},
      {"lt.Tensor", "aten::lt.Tensor_out"},
      {"le.Scalar", "aten::le.Scalar_out"},
      {"le.Tensor", "aten::le.Tensor_out"},
      {"gt.Scalar", "aten::gt.Scalar_out"},
      {"gt.Tensor", "aten::gt.Tensor_out"},
      {"ge.Scalar", "aten::ge.Scalar_out"},
      {"ge.Tensor", "aten::ge.Tensor_out"},
      {"logical_and", "aten::logical_and.out"},
      {"logical_or", "aten::logical_or.out"},
      {"logical_not", "aten::logical_not.out"},
      {"where.self", "aten::where.self_out"},
      {"masked_fill.Scalar", "aten::masked_fill.Scalar_out"},
      // views (as copies)
      {"view", "aten::view_copy.out"},
      {"reshape", "aten::view_copy.out"},
      {"permute", "aten::permute_copy.out"},
      {"transpose.int", "aten::transpose_copy.int_out"},
      {"slice.Tensor", "aten::slice_copy.Tensor_out"},
      {"expand", "aten::expand_copy.out"},
      {"select.int", "aten::select_copy.int_out"},
      {"unsqueeze", "aten::unsqueeze_copy.out"},
      {"squeeze.dim", "aten::squeeze_copy.dim_out"},
      {"squeeze.dims", "aten::squeeze_copy.dims_out"},
      // linear algebra, joins
      {"mm", "aten::mm.out"},
      {"bmm", "aten::bmm.out"},
      {"addmm", "aten::addmm.out"},
      {"linear", "aten::linear.out"},
      {"cat", "aten::cat.out"},
      {"stack", "aten::stack.out"},
      // reductions
      {"_softmax", "aten::_softmax.out"},
      {"_log_softmax", "aten::_log_softmax.out"},
      {"amax", "aten::amax.out"},
      {"amin", "aten::amin.out"},
      {"argmax", "aten::argmax.out"},
      {"argmin", "aten::argmin.out"},
      {"sum.dim_IntList", "aten::sum.IntList_out"},
      {"mean.dim", "aten::mean.out"},
      {"cumsum", "aten::cumsum.out"},
      {"tril", "aten::tril.out"},
      {"topk", "aten::topk.values"},
      // indexing and scatter
      {"embedding", "aten::embedding.out"},
      {"index_select", "aten::index_select.out"},
      {"gather", "aten::gather.out"},
      {"scatter.src", "aten::scatter.src_out"},
      {"scatter.value", "aten::scatter.value_out"},
      {"slice_scatter", "aten::slice_scatter.out"},
      {"select_scatter", "aten::select_scatter.out"},
      {"copy", "aten::copy.out"},
  };
  for (const auto& [op, kernel] : same_args) register_kernel(op, direct(kernel));
  register_kernel("index_put", direct("aten::index_put.out", /*optional_tensor_lists=*/true));
  return true;
}();

}  // namespace

}  // namespace ingot::exporters::executorch
