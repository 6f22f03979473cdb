#include "ingot/export/passes.h"

#include <map>
#include <set>

#include "ingot/ops/registry.h"

namespace ingot {

namespace {
// Only asserts have effects: ops are functional after export (custom ops are assumed
// pure, like torch.library.custom_op with mutates_args=()).
bool has_side_effect(const ir::Node& n) { return n.target == "assert"; }
}  // namespace

// Symbols a node needs bound: those in its integer arguments and assert condition.
void add_needed_symbols(const ir::Node& n, std::set<std::string>& needed) {
  auto add = [&](const sym::Expr& e) {
    for (const sym::Expr& s : sym::free_symbols(e)) needed.insert(s.name());
  };
  for (const ir::Argument& a : n.args) {
    if (auto* e = std::get_if<sym::Expr>(&a)) add(*e);
    if (auto* l = std::get_if<std::vector<sym::Expr>>(&a)) {
      for (const sym::Expr& e : *l) add(e);
    }
  }
  if (n.condition) add(*n.condition);
}

// True when one of n's outputs is where a needed (unbacked) symbol gets its value.
bool binds_needed_symbol(const ir::Graph& g, const ir::Node& n, const std::set<std::string>& needed) {
  for (ir::ValueId o : n.outputs) {
    const ir::ValueInfo& v = g.value(o);
    if (!v.is_tensor() && v.expr.is_symbol() && needed.contains(v.expr.name())) return true;
    for (const sym::Expr& e : v.sizes) {
      if (e.is_symbol() && needed.contains(e.name())) return true;
    }
  }
  return false;
}

size_t eliminate_dead_code(ir::Graph& g) {
  std::vector<bool> used(g.num_values(), false);
  std::set<std::string> needed;
  for (ir::ValueId v : g.outputs) {
    used[size_t(v)] = true;
    for (const sym::Expr& e : g.value(v).sizes) {
      for (const sym::Expr& s : sym::free_symbols(e)) needed.insert(s.name());
    }
  }
  auto& nodes = g.mutable_nodes();
  std::vector<bool> keep(nodes.size(), false);
  for (size_t i = nodes.size(); i-- > 0;) {
    const ir::Node& n = nodes[i];
    bool live = has_side_effect(n) || binds_needed_symbol(g, n, needed);
    for (ir::ValueId o : n.outputs) live = live || used[size_t(o)];
    if (!live) continue;
    keep[i] = true;
    for (ir::ValueId in : ir::Graph::node_inputs(n)) {
      used[size_t(in)] = true;
      for (const sym::Expr& e : g.value(in).sizes) {
        for (const sym::Expr& s : sym::free_symbols(e)) needed.insert(s.name());
      }
    }
    add_needed_symbols(n, needed);
  }
  size_t removed = 0;
  std::vector<ir::Node> kept;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (keep[i]) {
      for (auto& sub : nodes[i].subgraphs) eliminate_dead_code(*sub);
      kept.push_back(std::move(nodes[i]));
    } else {
      ++removed;
    }
  }
  nodes = std::move(kept);
  return removed;
}

size_t eliminate_dead_code(ExportedProgram& program) { return eliminate_dead_code(*program.graph); }

size_t eliminate_common_subexpressions(ExportedProgram& program) {
  ir::Graph& g = *program.graph;
  std::map<ir::ValueId, ir::ValueId> replaced;
  auto remap = [&](ir::ValueId v) {
    auto it = replaced.find(v);
    return it == replaced.end() ? v : it->second;
  };
  // Key: the node printed with its (remapped) arguments. Ops are deterministic functions
  // of their arguments, so equal keys compute equal values.
  std::map<std::string, std::vector<ir::ValueId>> seen;
  std::vector<ir::Node> kept;
  size_t merged = 0;
  for (ir::Node& n : g.mutable_nodes()) {
    for (ir::Argument& a : n.args) {
      if (auto* t = std::get_if<ir::TensorRef>(&a)) t->id = remap(t->id);
      if (auto* l = std::get_if<ir::OptionalValueList>(&a)) {
        for (auto& e : *l) {
          if (e) e = remap(*e);
        }
      }
    }
    const OpDef* op = OpRegistry::instance().find(n.target);
    if (n.subgraphs.empty() && op && !op->is_inplace()) {
      std::string key = n.target + "(";
      for (const ir::Argument& a : n.args) {
        key += ir::argument_str(g, a) + "#" + std::to_string(a.index()) + ";";
      }
      auto [it, inserted] = seen.emplace(key, n.outputs);
      if (!inserted) {
        for (size_t i = 0; i < n.outputs.size(); ++i) replaced[n.outputs[i]] = it->second[i];
        ++merged;
        continue;
      }
    }
    kept.push_back(std::move(n));
  }
  g.mutable_nodes() = std::move(kept);
  for (ir::ValueId& v : g.outputs) v = remap(v);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    program.signature.outputs.at(i).name = g.value(g.outputs[i]).name;
  }
  return merged;
}

}  // namespace ingot
