// Emission: an ExportedProgram (after the tracing stages) becomes one ExecuTorch
// execution plan. Every graph node goes through the kernel table (kernels.h) to calls of
// portable `.out` kernels; symbolic sizes become Int values computed at run time by
// `aten::sym_size.int` and `executorch_prim::*` ops; every non-constant tensor is placed
// by the memory planner (memory_planner.h).
//
// Values of the plan, by the program's signature:
//   parameters, constants, unmutated buffers  -> constant tensors (data in segment 0)
//   mutated buffers                            -> mutable state: planned for the whole run,
//                                                 initial value in segment 1, written back
//                                                 with copy_ at the end of the chain
//   user inputs (and mutated user inputs)      -> method inputs (planned if alloc_graph_input)
//   user outputs, mutated user inputs          -> method outputs (planned if alloc_graph_output)
// Dynamic sizes are DYNAMIC_BOUND tensors whose sizes are the upper bounds of the
// program's symbol ranges; a size without an upper bound is an error naming the symbol.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/exporters/executorch/pte_program.h"
#include "ingot/ir/program.h"

namespace ingot::exporters::executorch {

struct EmitOptions {
  std::string method_name = "forward";
  bool alloc_graph_input = true;
  bool alloc_graph_output = true;
  bool alloc_mutable_buffers = true;
  // "portable": every node a kernel call; "xnnpack": runs of nodes XNNPACK can run
  // (linear / matmul / conv and the elementwise ops between them) become one delegate
  // call each (xnnpack_partition.h), the rest kernel calls.
  std::string backend = "portable";
};

// What the emitter says about the plan: the method's input / output names (by the
// signature: user inputs by their path, outputs by their path or "output.<target>" for
// mutations) and the memory plan.
struct EmitSummary {
  std::vector<std::string> input_names, output_names;
  int64_t planned_bytes = 0;  // the arena (memory_id 1)
  int64_t planned_tensors = 0;
  int64_t unplanned_bytes_if_no_reuse = 0;  // sum of planned sizes (the planner's gain)
};

// Emits `program` as a method of `out` (a Program that may already hold methods; the
// constants are appended). Throws NotSupportedError naming the op and the user's line for
// a node without a kernel mapping.
EmitSummary emit_method(const ExportedProgram& program, const EmitOptions& options, Program& out);

// A method returning a constant (the LLM runner's metadata methods: get_max_seq_len, ...).
void emit_constant_method(const std::string& name, EValue value, Program& out);

}  // namespace ingot::exporters::executorch
