// Matching a program's graph inputs against real tensors: every symbol of the input
// sizes is bound to the size it has, and ranks, dtypes, static sizes, equal dims and
// symbol ranges are checked. The runtime does this before each run; passes use it to
// bind the example inputs' sizes as hints.
#pragma once

#include <string>
#include <vector>

#include "ingot/ir/program.h"
#include "ingot/sym/shape_env.h"
#include "ingot/sym/value_ranges.h"

namespace ingot {

// `graph_inputs` in graph input order (state included). Errors name the input, the dim
// and the Dim's range: "input 'input_ids' dim 1 is 5000, outside seq in [1, 4096]".
sym::Bindings bind_inputs(const ExportedProgram& program, const std::vector<Tensor>& graph_inputs);

// The value of size expression `e` under `bindings`; ValueError naming an unbound symbol.
int64_t evaluate_size(const sym::Expr& e, const sym::Bindings& bindings);

// "s0 in [1, 64]" or "s0 >= 2".
std::string describe_range(const std::string& name, const sym::ValueRange& range);

}  // namespace ingot
