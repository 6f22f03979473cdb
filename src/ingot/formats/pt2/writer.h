// Writing an ingot ExportedProgram as a torch.export archive (.pt2) that
// torch.export.load reads and whose .module() computes the same outputs.
//
//   ingot::pt2::save_pt2(ep, "model.pt2");
//   # python: torch.export.load("model.pt2").module()(input_ids)
//
// The program is written in torch's ATen dialect (schema 8.20, verifier "ATEN"): every
// ingot op as the ATen op of the same name and overload (ingot follows ATen schemas),
// arguments by schema name; symbolic sizes as sympy srepr text with their hints and the
// ranges of every symbol; integer arguments that are expressions over symbols computed
// by `aten.sym_size.int` and `_operator` nodes, as torch records them; runtime asserts
// as `_assert_scalar`; buffer / user-input updates as mutation outputs; the input tree
// as torch's (args, kwargs) spec with static inputs as constant inputs, the output tree
// with its type names (a transformers ModelOutput stays one). Weights and constants are
// stored raw, one record each, 64-byte aligned, with their *_config.json.
// cond / map / while_loop become torch.ops.higher_order.cond / map_impl / while_loop
// with their subgraphs as graph arguments (captured values join the operands); item()
// becomes aten._local_scalar_dense binding the unbacked symbol; each node's source line
// is written as torch's stack_trace metadata.
//
// Not written (NotSupportedError naming them): ops without an ATen twin (moe_experts);
// the error lists every such op with its count.
#pragma once

#include <string>

#include "ingot/ir/program.h"

namespace ingot::pt2 {

// The archive bytes (for tests and tools).
std::string save_pt2_to_bytes(const ExportedProgram& program);
// Writes through a temporary file renamed into place; IoError naming the path.
void save_pt2(const ExportedProgram& program, const std::string& path);

}  // namespace ingot::pt2
