// JSON encoders and decoders for the parts of an ExportedProgram (docs/ingot_format.md).
//
// Encoders write exactly what the format describes. Decoders accept only what the format
// allows and rebuild every object through its public constructors (expressions through
// the simplifying sym:: constructors, graph values through Graph::add_*_value), so a
// decoded program satisfies the same invariants as an exported one. Every problem is an
// IoError naming the archive and the JSON path (see JsonView); decoders never crash and
// never recurse deeper than the limits below, whatever the input.
// Internal to the archive code.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "ingot/formats/archive_json.h"
#include "ingot/ir/graph.h"
#include "ingot/ir/pytree.h"
#include "ingot/sym/expr.h"

namespace ingot::archive {

// Nesting limits: far above what export produces, low enough to keep recursion bounded.
inline constexpr int kMaxExprDepth = 64;
inline constexpr int kMaxTreeDepth = 64;
inline constexpr int kMaxGraphDepth = 16;
// Operands of one sum, product, And or Or (simplification is quadratic in them).
inline constexpr size_t kMaxOperands = 256;

// --- symbolic expressions (archive_expr.cpp) ----------------------------------------
// Integer constants are JSON integers, booleans JSON booleans, symbols JSON strings;
// compound expressions are objects {"op": "Add", "const": c, "terms": [[k, m], ...]} or
// {"op": "Mul" | "FloorDiv" | ... , "args": [...]}.
Json expr_to_json(const sym::Expr& e);
// Symbols must be in `known` (the program's range constraints).
sym::Expr expr_from_json(const JsonView& v, const std::set<std::string>& known, int depth = 0);

// --- pytree specs and static values (archive_pytree.cpp) ----------------------------
// None is null; others are {"bool": b} / {"int": i} / {"float": f} / {"string": s}.
Json static_value_to_json(const StaticValue& v);
StaticValue static_value_from_json(const JsonView& v);
Json tree_spec_to_json(const TreeSpec& s);
TreeSpec tree_spec_from_json(const JsonView& v, int depth = 0);

// --- graphs (archive_graph.cpp) ------------------------------------------------------
Json graph_to_json(const ir::Graph& g);
// Also checks the graph's structure: value ids in range and of the right kind, values
// defined once and before use, every op registered (NotSupportedError otherwise) and
// called with arguments of its schema's kinds, control-flow nodes well formed.
std::shared_ptr<ir::Graph> graph_from_json(const JsonView& v,
                                           const std::set<std::string>& known_symbols,
                                           int depth = 0);

// dtype by its name ("float32"); IoError otherwise.
DType dtype_from_json(const JsonView& v);

}  // namespace ingot::archive
