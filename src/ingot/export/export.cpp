// export_flat: the steps of one export.
//   1. lift module state (parameters, buffers) to traced inputs, swapping the module's
//      slots for the trace (restored on exit, also on error);
//   2. make user inputs traced, with symbols for dims the spec marks dynamic;
//   3. run the function under the tracer; collect outputs and mutations;
//   4. check the guards the trace took against the spec (or infer them for AUTO dims);
//   5. simplify every expression, order the signature, run passes, verify.
#include "ingot/export/export.h"

#include <fmt/format.h>

#include <set>

#include "ingot/core/version.h"
#include "ingot/export/dynamic_shapes_match.h"
#include "ingot/export/passes.h"
#include "ingot/export/tracer.h"
#include "ingot/sym/sym_node.h"

namespace ingot {

namespace {

// Swaps module slots for traced tensors and restores the originals on destruction.
class StateSwap {
 public:
  void swap(Tensor* slot, Tensor traced) {
    saved_.emplace_back(slot, *slot);
    *slot = std::move(traced);
  }
  ~StateSwap() {
    for (auto& [slot, original] : saved_) *slot = original;
  }

 private:
  std::vector<std::pair<Tensor*, Tensor>> saved_;
};

struct SymbolOrigin {
  bool named = false;  // from a named Dim (else AUTO)
  Dim dim = Dim::auto_();
  std::string first_use;  // "x dim 0"
};

std::string underscore_path(const std::string& p) {
  std::string s;
  for (char c : p) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  while (!s.empty() && s.back() == '_') s.pop_back();
  return s;
}

// Rewrites every expression of the graph (and its subgraphs) through f.
void rewrite_exprs(ir::Graph& g, const std::function<sym::Expr(const sym::Expr&)>& f) {
  for (size_t v = 0; v < g.num_values(); ++v) {
    ir::ValueInfo& info = g.mutable_value(ir::ValueId(v));
    for (sym::Expr& e : info.sizes) e = f(e);
    if (!info.is_tensor()) info.expr = f(info.expr);
  }
  for (ir::Node& n : g.mutable_nodes()) {
    for (ir::Argument& a : n.args) {
      if (auto* e = std::get_if<sym::Expr>(&a)) *e = f(*e);
      if (auto* l = std::get_if<std::vector<sym::Expr>>(&a)) {
        for (sym::Expr& e : *l) e = f(e);
      }
    }
    for (auto& sub : n.subgraphs) rewrite_exprs(*sub, f);
  }
}

void rewrite_conditions(ir::Graph& g, const sym::ShapeEnv& env) {
  for (ir::Node& n : g.mutable_nodes()) {
    if (n.condition) {
      n.condition = sym::substitute(*n.condition, [&](const sym::Expr& s) -> std::optional<sym::Expr> {
        auto it = env.replacements().find(s);
        if (it == env.replacements().end()) return std::nullopt;
        return it->second;
      });
    }
    for (auto& sub : n.subgraphs) rewrite_conditions(*sub, env);
  }
}

// Advice for one guard the spec does not imply.
std::string guard_advice(const sym::Guard& g, const sym::ShapeEnv& env,
                         const std::map<std::string, SymbolOrigin>& origins) {
  const sym::Expr cond = g.condition();
  std::vector<sym::Expr> syms = sym::free_symbols(cond);
  const std::string at = sym::where_str(g.where);
  if (cond.kind() == sym::Kind::Eq && syms.size() == 1) {
    const std::string& name = syms[0].name();
    return fmt::format("'{}' ({}) was specialised to {} at {}; use Dim::static_() for it (or "
                       "leave the dim static), or change the code at {} so it does not depend "
                       "on the exact size",
                       name, origins.at(name).first_use, env.size_hint(syms[0]), at, at);
  }
  if (cond.kind() == sym::Kind::Eq && syms.size() == 2) {
    return fmt::format("'{}' ({}) and '{}' ({}) must be equal (required at {}); use the same Dim "
                       "object for both",
                       syms[0].name(), origins.at(syms[0].name()).first_use, syms[1].name(),
                       origins.at(syms[1].name()).first_use, at);
  }
  std::string fix;
  for (const sym::Expr& s : syms) {
    sym::ValueRange r = env.range(s);
    const SymbolOrigin& o = origins.at(s.name());
    int64_t lo = std::max(r.lo, o.named ? o.dim.min() : r.lo);
    int64_t hi = std::min(r.hi, o.named ? o.dim.max() : r.hi);
    fix += fmt::format("{}{}", fix.empty() ? "" : ", ",
                       hi == sym::ValueRange::kPosInf ? fmt::format("Dim(\"{}\", min={})", s.name(), lo)
                                                      : fmt::format("Dim(\"{}\", min={}, max={})", s.name(), lo, hi));
  }
  return fmt::format("the code at {} requires {}; narrow the spec: {}", at, cond.str(), fix);
}

}  // namespace

namespace detail {

ExportedProgram export_flat(nn::Module* module, const FlatFn& fn, const TreeSpec& in_spec,
                            const std::vector<Leaf>& in_leaves, const ExportOptions& options) {
  auto env = std::make_shared<sym::ShapeEnv>();
  auto graph = std::make_shared<ir::Graph>();
  ir::Tracer tracer(*env, graph);
  StateSwap swap;

  // 1. Module state.
  std::map<std::string, Tensor> state;
  if (module) {
    for (const nn::NamedSlot& ns : module->named_slots()) {
      const Tensor& t = ns.slot->value;
      if (!t.defined()) continue;
      const bool is_param = ns.slot->kind == nn::SlotKind::Parameter;
      Tensor traced = tracer.add_input((is_param ? "p_" : "b_") + underscore_path(ns.fqn), t.dtype(),
                                       t.sym_sizes(), is_param ? InputKind::Parameter : InputKind::Buffer,
                                       ns.fqn, ns.slot->persistent, t.has_storage());
      if (t.has_storage()) state.emplace(ns.fqn, t);
      swap.swap(&ns.slot->value, traced);
    }
  }

  // 2. User inputs.
  std::vector<std::string> names = options.input_names;
  for (size_t i = names.size(); i < in_spec.children.size(); ++i) names.push_back(fmt::format("arg{}", i));
  ShapeSpecMatcher matcher(names);
  matcher.match(in_spec, options.dynamic_shapes);
  std::map<std::string, SymbolOrigin> origins;
  std::map<std::string, SymInt> named_symbols;
  std::vector<Leaf> traced_leaves;
  std::vector<Tensor> examples;
  for (size_t i = 0; i < in_leaves.size(); ++i) {
    const Leaf& leaf = in_leaves[i];
    const std::string& path = matcher.leaf_paths.at(i);
    if (!leaf.is_tensor()) {
      traced_leaves.push_back(leaf);
      continue;
    }
    const Tensor& t = leaf.tensor;
    INGOT_CHECK(t.has_storage(), ValueError, "[export] example input '{}' has no data", path);
    const auto& dims = matcher.dims_per_leaf.at(i);
    for (const auto& [d, dim] : dims) {
      INGOT_CHECK(d >= 0 && d < t.dim(), ValueError,
                  "[export] dynamic_shapes gives dim {} of input '{}', which has {} dims", d, path, t.dim());
    }
    Shape sizes;
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t hint = t.size(d);
      auto it = dims.find(int(d));
      Dim dim = it != dims.end() ? it->second : (options.dynamic ? Dim::auto_() : Dim::static_());
      const std::string use = fmt::format("{} dim {}", path, d);
      if (dim.mode() == Dim::Mode::Static) {
        sizes.push_back(hint);
      } else if (dim.mode() == Dim::Mode::Auto) {
        sym::ShapeEnv::SymbolOptions o;
        SymInt s = sym::create_symint(*env, hint, o);
        if (s.is_symbolic()) origins[s.str()] = SymbolOrigin{false, dim, use};
        sizes.push_back(s);
      } else if (auto found = named_symbols.find(dim.name()); found != named_symbols.end()) {
        INGOT_CHECK(env->size_hint(sym::expr_of(found->second)) == hint, ValueError,
                    "[export] Dim '{}' is used for {} (size {}) and {} (size {}); the example "
                    "inputs must agree where the same Dim is used",
                    dim.name(), origins[dim.name()].first_use,
                    env->size_hint(sym::expr_of(found->second)), use, hint);
        sizes.push_back(found->second);
      } else {
        INGOT_CHECK(dim.min() <= hint && hint <= dim.max(), ValueError,
                    "[export] example input '{}' dim {} is {}, outside {}", path, d, hint, dim.str());
        sym::ShapeEnv::SymbolOptions o;
        o.range = sym::ValueRange::between(dim.min(), dim.max());
        o.name = dim.name();
        o.specialize_zero_one = false;
        SymInt s = sym::create_symint(*env, hint, o);
        named_symbols.emplace(dim.name(), s);
        origins[dim.name()] = SymbolOrigin{true, dim, use};
        sizes.push_back(s);
      }
    }
    examples.push_back(t);
    traced_leaves.push_back(Leaf{tracer.add_input(path, t.dtype(), sizes, InputKind::UserInput, path), {}});
  }

  // 3. Trace.
  TreeSpec out_spec;
  std::vector<ir::ValueId> user_outputs;
  std::vector<std::string> output_paths;
  {
    ir::Tracer::Active active(tracer);
    std::vector<Leaf> outs = fn(traced_leaves, out_spec);
    for (const Leaf& l : outs) {
      if (l.is_tensor()) user_outputs.push_back(tracer.value_of(l.tensor));
    }
  }

  // User outputs are named after their place in the output tree ("logits") when they
  // have one and are computed by a node.
  {
    std::vector<std::string> paths = out_spec.leaf_paths("");
    std::vector<bool> is_input(graph->num_values(), false);
    for (ir::ValueId v : graph->inputs) is_input[size_t(v)] = true;
    size_t k = 0;
    std::vector<std::string> tensor_paths;
    std::function<void(const TreeSpec&)> walk = [&](const TreeSpec& s) {
      if (s.type == "tensor") tensor_paths.push_back(paths.at(k));
      if (s.is_leaf()) ++k;
      for (const TreeSpec& c : s.children) walk(c);
    };
    walk(out_spec);
    std::set<ir::ValueId> renamed;
    for (size_t i = 0; i < user_outputs.size() && i < tensor_paths.size(); ++i) {
      const ir::ValueId v = user_outputs[i];
      // Only named places (dict keys, fields): positions like "[0]" keep the op's name.
      const std::string& path = tensor_paths[i];
      if (path.empty() || path.find('[') != std::string::npos) continue;
      if (is_input[size_t(v)] || !renamed.insert(v).second) continue;
      graph->mutable_value(v).name = graph->unique_name(path);
    }
  }

  // Mutations of inputs: buffers and user inputs become outputs; parameters and
  // constants were rejected when written.
  ExportedProgram ep;
  std::vector<OutputSpec> mutation_specs;
  std::vector<ir::ValueId> mutation_values;
  for (const ir::TracedInput& in : tracer.inputs()) {
    auto v = tracer.mutated_value(in);
    if (!v) continue;
    const std::string& name = graph->value(*v).name;
    if (in.kind == InputKind::Buffer) mutation_specs.push_back({OutputKind::BufferMutation, name, in.target});
    if (in.kind == InputKind::UserInput) mutation_specs.push_back({OutputKind::UserInputMutation, name, in.target});
    mutation_values.push_back(*v);
  }

  // 4. Guards against the spec.
  std::vector<std::string> problems;
  std::vector<sym::Expr> deferred;
  // The named Dims with only their declared ranges: what the user's spec promises.
  sym::ShapeEnv spec_env;
  for (const auto& [name, o] : origins) {
    if (!o.named) continue;
    sym::ShapeEnv::SymbolOptions so;
    so.range = sym::ValueRange::between(o.dim.min(), o.dim.max());
    so.name = name;
    so.specialize_zero_one = false;
    spec_env.create_symbol(std::clamp(env->size_hint(sym::symbol(name)), o.dim.min(), o.dim.max()), so);
  }
  for (const sym::Guard& g : env->guards()) {
    ep.guards.push_back(g.str());
    sym::Expr cond = g.condition();
    bool involves_auto = false;
    for (const sym::Expr& s : sym::free_symbols(cond)) {
      auto it = origins.find(s.name());
      if (it == origins.end() || !it->second.named) involves_auto = true;
    }
    if (involves_auto) continue;  // AUTO dims take whatever the trace needed
    // Implied by the declared ranges alone?
    if (spec_env.prove(cond) == sym::Truth::True) continue;
    if (options.prefer_deferred_runtime_asserts_over_guards) {
      deferred.push_back(cond);
      continue;
    }
    problems.push_back(fmt::format("  - {}: {}", g.str(), guard_advice(g, *env, origins)));
  }
  INGOT_CHECK(problems.empty(), ValueError,
              "[export] the dynamic_shapes spec does not imply the guards the trace needed:\n{}\n"
              "(or set prefer_deferred_runtime_asserts_over_guards to check them at run time)",
              fmt::join(problems, "\n"));

  // 5. Finish the program.
  graph->outputs = mutation_values;
  graph->outputs.insert(graph->outputs.end(), user_outputs.begin(), user_outputs.end());
  ep.signature.outputs = mutation_specs;
  for (ir::ValueId v : user_outputs) ep.signature.outputs.push_back({OutputKind::UserOutput, graph->value(v).name, ""});
  // Inputs in torch's order: parameters, buffers, constants, user inputs; state that was
  // never initialised (and so never read, or the trace would have failed) is dropped.
  graph->inputs.clear();
  for (InputKind kind : {InputKind::Parameter, InputKind::Buffer, InputKind::ConstantTensor, InputKind::UserInput}) {
    for (const ir::TracedInput& in : tracer.inputs()) {
      if (in.kind != kind) continue;
      if ((kind == InputKind::Parameter || kind == InputKind::Buffer) && !state.contains(in.target)) continue;
      graph->inputs.push_back(in.value);
      ep.signature.inputs.push_back({kind, graph->value(in.value).name, in.target, in.persistent});
      if (kind == InputKind::ConstantTensor) ep.constants.emplace(in.target, in.constant);
    }
  }
  // Deferred guards are asserted before any node runs.
  std::vector<ir::Node> asserts;
  for (const sym::Expr& c : deferred) {
    ir::Node n;
    n.target = "assert";
    n.condition = c;
    n.message = fmt::format("guard {} taken during export", c.str());
    asserts.push_back(std::move(n));
  }
  auto& nodes = graph->mutable_nodes();
  nodes.insert(nodes.begin(), asserts.begin(), asserts.end());
  rewrite_exprs(*graph, [&](const sym::Expr& e) { return env->simplify(e); });
  // Asserts keep their condition: simplifying with the facts they state would make them
  // vacuous. Only symbol replacements apply (so every symbol they use is bound).
  rewrite_conditions(*graph, *env);

  for (const sym::Expr& s : env->symbols()) {
    if (env->replacements().contains(s)) continue;
    const sym::SymbolInfo& info = env->symbol_info(s);
    auto it = origins.find(s.name());
    // Named Dims keep their declared range (the guards were checked to be implied by it,
    // or are asserted at run time); other symbols get what the trace learned.
    const bool named = it != origins.end() && it->second.named;
    sym::ValueRange r = named ? sym::ValueRange::between(it->second.dim.min(), it->second.dim.max())
                              : info.range;
    ep.range_constraints[s.name()] = SymbolRange{r, info.backed()};
  }
  ep.graph = graph;
  ep.state = std::move(state);
  ep.in_spec = in_spec;
  ep.input_names = names;
  ep.out_spec = out_spec;
  ep.example_inputs = examples;
  ep.ingot_version = version();
  ep.trace_context = env;
  eliminate_dead_code(ep);
  ep.verify();
  return ep;
}

}  // namespace detail

}  // namespace ingot
