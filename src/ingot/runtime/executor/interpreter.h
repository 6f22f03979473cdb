// Runs an exported graph on CPU tensors: binds symbols from input shapes, checks the
// input constraints, executes nodes (ops through the registry's eager path, control
// flow through subgraphs), evaluates asserts.
//
// A graph is compiled once (compile()): ops resolved, the last use of every value, and
// which functional writes can run in place ("reinplacing": index_copy(cache, ...) whose
// result is the cache's mutation output becomes index_copy_ on the cache itself, so a
// static KV cache is updated without a copy). Running then drops each value after its
// last use so its memory returns to the StoragePool.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "ingot/ir/input_binding.h"
#include "ingot/ir/program.h"
#include "ingot/runtime/executor/memory_pool.h"
#include "ingot/sym/shape_env.h"

namespace ingot::runtime {

struct CompiledGraph;

// `writable`: graph input -> the graph output that is its new value (mutated buffers and
// user inputs the caller lets the runtime write in place). Writes into other inputs are
// never made in place.
std::shared_ptr<const CompiledGraph> compile(
    const ir::Graph& graph, const std::map<ir::ValueId, ir::ValueId>& writable = {});

// Executes a compiled graph with its inputs (in graph.inputs order); binds unbacked
// symbols as the values that produce them run. `pool` (optional) provides kernel outputs.
std::vector<Tensor> run_graph(const CompiledGraph& graph, const std::vector<Tensor>& inputs,
                              sym::Bindings& bindings,
                              const std::map<std::string, SymbolRange>& ranges,
                              StoragePool* pool = nullptr);

// Number of nodes of the compiled graph that run in place.
size_t num_reinplaced(const CompiledGraph& graph);

}  // namespace ingot::runtime
