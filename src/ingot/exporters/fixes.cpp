#include "ingot/exporters/fixes.h"

#include <fmt/format.h>

#include <deque>

#include "ingot/exporters/registry.h"

namespace ingot::exporters {

namespace {

std::deque<NodeFix>& node_registry() {
  static std::deque<NodeFix> r;
  return r;
}
std::deque<ProgramFix>& program_registry() {
  static std::deque<ProgramFix> r;
  return r;
}

bool for_backend(const std::string& fix_backend, const std::string& backend) {
  return fix_backend == "*" || fix_backend == backend;
}

void remap(ir::ValueId& v, const std::map<ir::ValueId, ir::ValueId>& forward) {
  for (auto it = forward.find(v); it != forward.end(); it = forward.find(v)) v = it->second;
}

void remap_args(ir::Node& n, const std::map<ir::ValueId, ir::ValueId>& forward) {
  for (ir::Argument& a : n.args) {
    if (auto* t = std::get_if<ir::TensorRef>(&a)) remap(t->id, forward);
    if (auto* l = std::get_if<ir::OptionalValueList>(&a)) {
      for (auto& e : *l) {
        if (e) remap(*e, forward);
      }
    }
  }
}

// Applies `fixes` to g's nodes (and subgraphs); returns notes.
void fix_graph(ir::Graph& g, const std::vector<const NodeFix*>& fixes,
               std::vector<std::string>& notes) {
  std::map<ir::ValueId, ir::ValueId> forward;
  std::vector<ir::Node> out;
  std::vector<ir::Node> pending = std::move(g.mutable_nodes());
  g.mutable_nodes().clear();
  for (ir::Node& node : pending) {
    remap_args(node, forward);
    std::vector<ir::Node> current{std::move(node)};
    for (const NodeFix* fix : fixes) {
      std::vector<ir::Node> next;
      for (ir::Node& n : current) {
        if (fix->target != "*" && fix->target != n.target) {
          next.push_back(std::move(n));
          continue;
        }
        std::optional<NodeRewrite> r = fix->fn(g, n);
        if (!r) {
          next.push_back(std::move(n));
          continue;
        }
        for (const auto& [from, to] : r->forward) forward[from] = to;
        if (!r->note.empty()) notes.push_back(fmt::format("{}: {}", fix->name, r->note));
        for (ir::Node& repl : r->replacement) next.push_back(std::move(repl));
      }
      current = std::move(next);
    }
    for (ir::Node& n : current) {
      remap_args(n, forward);
      for (auto& sub : n.subgraphs) fix_graph(*sub, fixes, notes);
      out.push_back(std::move(n));
    }
  }
  g.mutable_nodes() = std::move(out);
  for (ir::ValueId& v : g.outputs) remap(v, forward);
}

}  // namespace

void register_node_fix(NodeFix fix, std::source_location where) {
  INGOT_CHECK(!fix.name.empty() && !fix.backend.empty() && !fix.target.empty() && fix.fn,
              InternalError,
              "[exporters] node fix at {} needs a name, a backend, a target and a function",
              source_site(where));
  append_named(node_registry(), std::move(fix), "[exporters] node fix", where);
}

void register_program_fix(ProgramFix fix, std::source_location where) {
  INGOT_CHECK(!fix.name.empty() && !fix.backend.empty() && fix.fn, InternalError,
              "[exporters] program fix at {} needs a name, a backend and a function",
              source_site(where));
  append_named(program_registry(), std::move(fix), "[exporters] program fix", where);
}

std::vector<const NodeFix*> node_fixes(const std::string& backend) {
  std::vector<const NodeFix*> out;
  for (const NodeFix& f : node_registry()) {
    if (for_backend(f.backend, backend)) out.push_back(&f);
  }
  return out;
}

std::vector<const ProgramFix*> program_fixes(const std::string& backend) {
  std::vector<const ProgramFix*> out;
  for (const ProgramFix& f : program_registry()) {
    if (for_backend(f.backend, backend)) out.push_back(&f);
  }
  return out;
}

std::vector<std::string> apply_program_fixes(const std::string& backend, ExportedProgram& program) {
  std::vector<std::string> notes;
  for (const ProgramFix* f : program_fixes(backend)) {
    for (const std::string& note : f->fn(program))
      notes.push_back(fmt::format("{}: {}", f->name, note));
  }
  return notes;
}

std::vector<std::string> apply_node_fixes(const std::string& backend, ExportedProgram& program) {
  std::vector<std::string> notes;
  const auto fixes = node_fixes(backend);
  if (fixes.empty()) return notes;
  ir::Graph& g = *program.graph;
  fix_graph(g, fixes, notes);
  // The signature names outputs by value name: keep it in step with forwarded outputs.
  for (size_t i = 0; i < g.outputs.size() && i < program.signature.outputs.size(); ++i) {
    program.signature.outputs[i].name = g.value(g.outputs[i]).name;
  }
  return notes;
}

}  // namespace ingot::exporters
