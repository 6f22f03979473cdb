// CompiledGraph: what compile() (interpreter.h) resolves once per graph: the registry op
// of every node, its in-place twin when reinplacing applies, the values that die after
// it, and compiled subgraphs. Shared by the interpreter and the execution plan.
#pragma once

#include <memory>
#include <vector>

#include "ingot/ir/graph.h"
#include "ingot/ops/registry.h"

namespace ingot::runtime {

struct CompiledGraph {
  const ir::Graph* graph = nullptr;
  struct Step {
    const OpDef* op = nullptr;         // registry op (null for control flow / assert / item)
    const OpDef* inplace = nullptr;    // run this twin on the first argument instead
    std::vector<ir::ValueId> release;  // values dead after this node
    std::vector<std::shared_ptr<const CompiledGraph>> subgraphs;
  };
  std::vector<Step> steps;
};

}  // namespace ingot::runtime
