// Runs an exported graph on CPU tensors: binds symbols from input shapes, checks the
// input constraints, executes nodes (ops through the registry's eager path, control
// flow through subgraphs), evaluates asserts.
#pragma once

#include <vector>

#include "ingot/export/program.h"
#include "ingot/sym/shape_env.h"

namespace ingot::runtime {

// Binds every symbol of the user inputs' sizes and checks ranks, static sizes, equal
// dims and symbol ranges. Errors name the input, the dim and the Dim's range:
//   "input 'input_ids' dim 1 is 5000, outside seq in [1, 4096]".
sym::Bindings bind_inputs(const ExportedProgram& program, const std::vector<Tensor>& graph_inputs);

// Executes `graph` with its inputs (in graph.inputs order); binds unbacked symbols as
// values that produce them run. Returns the graph outputs.
std::vector<Tensor> run_graph(const ir::Graph& graph, const std::vector<Tensor>& inputs,
                              sym::Bindings& bindings,
                              const std::map<std::string, SymbolRange>& ranges);

}  // namespace ingot::runtime
