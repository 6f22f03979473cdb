// The kernel table: how each ingot op becomes calls of ExecuTorch kernels. An entry reads
// the node through KernelContext (its arguments as plan values, its outputs as planned
// tensors) and emits one or more kernel calls, arguments in the order of the kernel's
// `.out` schema (defaults included, outputs last: check `torch.ops.aten.<op>.<overload>.
// _schema`, tools/executorch/dump_out_schemas.py prints them):
//
//   INGOT_EXECUTORCH_KERNEL(add_tensor, "add.Tensor", [](KernelContext& k) {
//     k.call("aten::add.out", {k.tensor(0), k.tensor(1), k.scalar(2)}, {k.out()});
//   });
//
// Only kernels the runtime registers can be named (the portable library's list:
// tools/executorch/list_kernels.py); an op the portable kernels cannot express directly is
// composed from several calls with temporaries (k.temp), or replaced at trace time by an
// executorch op patch (executorch_patches.cpp).
#pragma once

#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/exporters/executorch/pte_program.h"
#include "ingot/ir/graph.h"

namespace ingot::exporters::executorch {

class Emitter;

class KernelContext {
 public:
  KernelContext(Emitter& e, const ir::Graph& g, const ir::Node& n) : e_(e), g_(g), n_(n) {}

  const ir::Node& node() const { return n_; }
  size_t num_args() const { return n_.args.size(); }
  bool is_none(size_t i) const;

  // Argument i of the node as a plan value index.
  int32_t tensor(size_t i);
  int32_t optional_tensor(size_t i);       // Null when absent
  int32_t tensor_list(size_t i);           // Tensor[] -> TensorList
  int32_t optional_tensor_list(size_t i);  // Tensor?[] -> OptionalTensorList
  int32_t int_(size_t i);                  // an integer (symbolic: computed at run time)
  int32_t optional_int(size_t i);
  int32_t int_list(size_t i);           // int[] / SymInt[] -> IntList of Int values
  int32_t optional_int_list(size_t i);  // int[1]? -> IntList or Null
  int32_t double_(size_t i);
  int32_t boolean(size_t i);
  int32_t scalar(size_t i);  // Scalar -> Int / Double / Bool by its kind
  int32_t optional_scalar(size_t i);
  int32_t optional_string(size_t i);
  int32_t optional_dtype(size_t i);  // ScalarType as Int, or Null

  // Plan values made here.
  int32_t none();
  int32_t int_const(int64_t v);
  int32_t bool_const(bool v);
  int32_t double_const(double v);
  int32_t string_const(const std::string& s);
  int32_t int_list_of(const std::vector<sym::Expr>& items);
  int32_t int_of(const sym::Expr& e);  // an Int value (computed at run time when symbolic)
  int32_t value(EValue v);             // any other plan value

  // Output k of the node (a planned tensor), and temporaries of a composed lowering.
  int32_t out(size_t k = 0);
  int32_t temp(DType dtype, const std::vector<sym::Expr>& sizes);

  const ir::ValueInfo& in_info(size_t i) const;
  const ir::ValueInfo& out_info(size_t k = 0) const;

  // Appends a call of an out-variant kernel ("aten::add.out"): its arguments, then its out
  // tensors, then one more slot for the return (ExecuTorch's calling convention: the
  // return is the out tensor again, or a TensorList of the outs when there are several).
  void call(const std::string& kernel, const std::vector<int32_t>& args,
            const std::vector<int32_t>& outs);

  // A prim op (aten::sym_size.int, aten::_local_scalar_dense, executorch_prim::*): its
  // arguments then its one return value, no out arguments.
  void call_prim(const std::string& kernel, const std::vector<int32_t>& args_and_return);

  [[noreturn]] void unsupported(const std::string& what) const;

  // For delegate lowerings (xnnpack_delegate.cpp): the data of argument i when it is a
  // program constant (a weight), else null; a plan tensor's sizes (upper bounds) and
  // dtype; and a DelegateCall of backend `id` on `payload` with `args` (the inputs, then
  // the outputs) in place of a kernel call.
  const Tensor* constant(size_t i);
  // The upper bound of a size (the program's ranges; what memory is planned for).
  int64_t upper_bound(const sym::Expr& size) const;
  std::vector<int64_t> bound_sizes(int32_t tensor) const;
  void delegate_call(const std::string& id, DelegateBlob payload, const std::vector<int32_t>& args);

 private:
  Emitter& e_;
  const ir::Graph& g_;
  const ir::Node& n_;
};

using KernelFn = std::function<void(KernelContext&)>;
void register_kernel(const std::string& op, KernelFn fn,
                     std::source_location where = std::source_location::current());
const KernelFn* find_kernel(const std::string& op);
std::vector<std::string> mapped_ops();

// A data-dependent output size (an unbacked symbol: nonzero's row count) is planned for
// its upper bound. When the program's range constraints leave it open (ingot's tracer
// does not bound it; torch.export does), the op's size bounds give it from the inputs':
// fn(k) returns (size symbol, bound) pairs; it runs before the node's outputs exist, so
// it reads only the node and its inputs (k.in_info, k.upper_bound).
using SizeBoundsFn = std::function<std::vector<std::pair<sym::Expr, int64_t>>(KernelContext&)>;
void register_size_bounds(const std::string& op, SizeBoundsFn fn,
                          std::source_location where = std::source_location::current());
const SizeBoundsFn* find_size_bounds(const std::string& op);

}  // namespace ingot::exporters::executorch

#define INGOT_ET_CONCAT_(a, b) a##b
#define INGOT_ET_CONCAT(a, b) INGOT_ET_CONCAT_(a, b)
#define INGOT_EXECUTORCH_KERNEL(id, op, ...)                          \
  static const bool INGOT_ET_CONCAT(kEtKernel_, id) = [] {            \
    ::ingot::exporters::executorch::register_kernel(op, __VA_ARGS__); \
    return true;                                                      \
  }()
#define INGOT_EXECUTORCH_SIZE_BOUNDS(id, op, ...)                           \
  static const bool INGOT_ET_CONCAT(kEtSizeBounds_, id) = [] {             \
    ::ingot::exporters::executorch::register_size_bounds(op, __VA_ARGS__); \
    return true;                                                           \
  }()
