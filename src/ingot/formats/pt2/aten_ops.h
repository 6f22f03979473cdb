// Calling the ATen ops of a .pt2 graph with ingot's op registry.
//
// A node of torch's graph names its op ("torch.ops.aten.add.Tensor") and passes its
// arguments by schema name. ingot follows ATen schemas, so most ops map by name onto
// the registry op of the same name and overload ("add.Tensor"; ATen's "default"
// overload is ingot's plain name): each registry argument takes the node's argument of
// the same name, or its default. Differences handled here:
//
//  * arguments ingot's schema leaves out are accepted only with values that do not
//    change the result (device "cpu", strided layout, pin_memory / non_blocking False,
//    a contiguous / preserve memory format); anything else is a NotSupportedError naming
//    the op and the argument;
//  * a number passed where the schema says Tensor (`add.Tensor(x, 1)`) calls the
//    op's `.Scalar` overload, or a 0-d tensor of the number when there is none;
//  * ops ingot has no registry entry for are adapters written with registry ops:
//    `to.*`, `alias`, `dropout` (eval), `diff`, `new_ones` / `new_zeros`, `full_like`,
//    `scalar_tensor`, `index.Tensor` (integer indices), `any.dim`, `__and__` / `__or__` /
//    `__xor__` (the bitwise registry ops), `native_layer_norm`, `upsample_*2d.vec` with an
//    output size, `expand_as` / `flatten.using_ints` (registry views),
//    `_assert_tensor_metadata` (no-op);
//  * a number as `self` of a `.Tensor` op (`sub.Tensor(5, x)`) is a 0-d tensor: the
//    `.Scalar` overload is used only when it takes every number given as a Scalar;
//  * SymInt arithmetic (`_operator.add`, `aten.sym_size.int`, ...) and `_assert_scalar`
//    work on ingot SymInt / SymBool.
//
// Everything runs through call_op, so under the export tracer each call becomes ingot
// graph nodes and at run time it computes directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ingot/core/sym_int.h"
#include "ingot/ops/value.h"

namespace ingot::pt2 {

// A value of the interpreter: an op Value (tensor, list, int, ...), or a SymBool.
struct PValue {
  Value value;
  std::optional<SymBool> sym_bool;
  // Device / layout / memory-format arguments: only their text is kept ("cpu",
  // "strided", "contiguous_format"), for the benign-value check.
  std::optional<std::string> placement;
};

struct NamedValue {
  std::string name;
  PValue value;
};

// The op name a node target maps to ("torch.ops.aten.add.Tensor" -> "aten::add.Tensor"
// for messages, "add.Tensor" for the registry); empty when the target is not an ATen
// op, an _operator function or a custom op of a loaded library.
struct OpName {
  std::string display;       // "aten.add.Tensor", "_operator.add", "mylib.sin.default"
  std::string registry;      // "add.Tensor", "mylib::sin"
  bool is_operator = false;  // a Python _operator function on SymInts
};
std::optional<OpName> parse_target(const std::string& target);

// Whether `op` can be called: a registry op, an adapter or an _operator function.
bool is_supported(const OpName& op);

// Calls the op; returns one PValue per output (a Tensor[] return is one TensorList).
// Throws NotSupportedError / ValueError naming the op and the argument.
std::vector<PValue> call_aten(const OpName& op, const std::vector<NamedValue>& args);

}  // namespace ingot::pt2
