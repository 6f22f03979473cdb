// Program fixes shared by every backend, each next to the reason it exists.
#include <fmt/format.h>

#include "ingot/exporters/fixes.h"

namespace ingot::exporters {

namespace {

// If `cond` bounds one backed symbol (s <= c, s < c, s >= c, s > c, s == c), the
// symbol's new range; else nullopt.
std::optional<std::pair<std::string, sym::ValueRange>> bound_of(
    const sym::Expr& cond, const std::map<std::string, SymbolRange>& ranges) {
  const sym::Kind k = cond.kind();
  if (k != sym::Kind::Le && k != sym::Kind::Lt && k != sym::Kind::Eq) return std::nullopt;
  const sym::Linear lin = sym::to_linear(sym::difference(cond));  // lin OP 0
  if (lin.terms.size() != 1 || !lin.terms[0].first.is_symbol()) return std::nullopt;
  const auto& [s, coeff] = lin.terms[0];
  auto it = ranges.find(s.name());
  if (it == ranges.end() || !it->second.backed || (coeff != 1 && coeff != -1)) return std::nullopt;
  sym::ValueRange r = it->second.range;
  // coeff * s + c OP 0
  const int64_t c = lin.constant;
  const int64_t strict = k == sym::Kind::Lt ? 1 : 0;
  if (k == sym::Kind::Eq) {
    const int64_t v = coeff == 1 ? -c : c;
    r.lo = std::max(r.lo, v);
    r.hi = std::min(r.hi, v);
  } else if (coeff == 1) {
    r.hi = std::min(r.hi, -c - strict);  // s <= -c (- 1 when strict)
  } else {
    r.lo = std::max(r.lo, c + strict);  // s >= c (+ 1 when strict)
  }
  if (r.lo > r.hi) return std::nullopt;  // contradictory: keep the assert, it will fail loudly
  return std::pair{s.name(), r};
}

// With prefer_deferred_runtime_asserts_over_guards (what `dynamic` exports use), a guard
// like `seq <= 512` (BERT's position table) becomes a runtime assert in the graph. A bound
// on one input size is a range, not a computation: it belongs in range_constraints, where
// the runtime checks it when binding inputs (naming the input and dim) and where the ONNX
// exporter documents it, and it should not cost a graph node (ONNX has no assert op). Only
// top-level asserts are folded: one inside a branch holds only when that branch runs.
std::vector<std::string> fold_bound_asserts(ExportedProgram& p) {
  std::vector<std::string> notes;
  auto& nodes = p.graph->mutable_nodes();
  std::vector<ir::Node> kept;
  for (ir::Node& n : nodes) {
    if (n.target == "assert" && n.condition) {
      if (auto b = bound_of(*n.condition, p.range_constraints)) {
        p.range_constraints[b->first].range = b->second;
        notes.push_back(fmt::format("{} is now a range: {} in {}", n.condition->str(), b->first,
                                    b->second.str()));
        continue;
      }
    }
    kept.push_back(std::move(n));
  }
  nodes = std::move(kept);
  return notes;
}

}  // namespace

INGOT_REGISTER_PROGRAM_FIX(fold_bound_asserts, "*",
                           "a bound on one input size is a range, not a graph node",
                           fold_bound_asserts);

}  // namespace ingot::exporters
