// Fixes: graph rewrites after tracing, for one backend (seed 004).
//
//  * A node fix looks at one node of the traced graph (and of every subgraph) and may
//    rewrite it: replace it by other nodes, drop it, or forward its outputs to existing
//    values. Register it for the ops it handles ("*" for every node):
//
//      INGOT_REGISTER_NODE_FIX(onnx_drop_asserts, "onnx", "assert",
//                              "ONNX has no assert operator", fix_fn);
//
//  * A program fix needs the whole program (range constraints, signature, state) and
//    rewrites it in place:
//
//      INGOT_REGISTER_PROGRAM_FIX(fold_bound_asserts, "*",
//                                 "bounds on one size are ranges, not asserts", fix_fn);
//
// The exporters apply program fixes, then node fixes, at their named stages (see
// docs/exporters.md), then remove dead code.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/ir/program.h"

namespace ingot::exporters {

// What a node fix decides for one node.
struct NodeRewrite {
  std::vector<ir::Node> replacement;           // nodes that take its place (empty: dropped)
  std::map<ir::ValueId, ir::ValueId> forward;  // uses of key are rewritten to value
  std::string note;                            // recorded in the export's notes
};
// nullopt: leave the node as it is.
using NodeFixFn = std::function<std::optional<NodeRewrite>(ir::Graph& graph, const ir::Node& node)>;
using ProgramFixFn = std::function<std::vector<std::string>(ExportedProgram& program)>;  // -> notes

struct NodeFix {
  std::string name;
  std::string backend;  // "native", "onnx", "*"
  std::string target;   // node target it applies to ("assert", "clone"), or "*"
  std::string reason;
  NodeFixFn fn;
  std::string where;
};

struct ProgramFix {
  std::string name;
  std::string backend;
  std::string reason;
  ProgramFixFn fn;
  std::string where;
};

void register_node_fix(NodeFix fix, std::source_location where = std::source_location::current());
void register_program_fix(ProgramFix fix,
                          std::source_location where = std::source_location::current());
std::vector<const NodeFix*> node_fixes(const std::string& backend);
std::vector<const ProgramFix*> program_fixes(const std::string& backend);

// Runs every program fix of `backend`; returns notes "fix_name: note".
std::vector<std::string> apply_program_fixes(const std::string& backend, ExportedProgram& program);
// Runs every node fix of `backend` over the graph and its subgraphs (each node is
// offered to each fix once, in registration order); returns notes.
std::vector<std::string> apply_node_fixes(const std::string& backend, ExportedProgram& program);

}  // namespace ingot::exporters

#define INGOT_REGISTER_NODE_FIX(name, backend, target, reason, ...)                           \
  static const bool INGOT_FIX_CONCAT(kNodeFix_, name) = [] {                                  \
    ::ingot::exporters::register_node_fix({#name, backend, target, reason, __VA_ARGS__, {}}); \
    return true;                                                                              \
  }()

#define INGOT_REGISTER_PROGRAM_FIX(name, backend, reason, ...)                           \
  static const bool INGOT_FIX_CONCAT(kProgramFix_, name) = [] {                          \
    ::ingot::exporters::register_program_fix({#name, backend, reason, __VA_ARGS__, {}}); \
    return true;                                                                         \
  }()

#define INGOT_FIX_CONCAT_(a, b) a##b
#define INGOT_FIX_CONCAT(a, b) INGOT_FIX_CONCAT_(a, b)
