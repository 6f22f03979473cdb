// Graph passes over an ExportedProgram.
#pragma once

#include <set>
#include <string>

#include "ingot/ir/program.h"

namespace ingot {

// Removes nodes whose outputs are never used (asserts and nodes inside subgraphs are
// kept unless the subgraph's owner is removed). Graph inputs stay: the signature is
// fixed. Returns the number of nodes removed.
size_t eliminate_dead_code(ExportedProgram& program);
size_t eliminate_dead_code(ir::Graph& graph);

// Merges nodes that call the same op on the same arguments (control-flow nodes and
// asserts excluded), rewriting later uses. Returns the number of nodes merged.
size_t eliminate_common_subexpressions(ExportedProgram& program);


// Re-traces the program, replacing every op that has a decomposition (and a kernel: the
// op is then a composite, e.g. softmax.int -> _to_copy + _softmax) by the ops it
// calls, until only core ops remain. User source lines are kept. Ops named in `keep`
// stay as they are (a backend that translates them natively, e.g. ONNX's MatMulNBits for
// ingot::quantized_linear).
void decompose_to_core(ExportedProgram& program, const std::set<std::string>& keep = {});

}  // namespace ingot
