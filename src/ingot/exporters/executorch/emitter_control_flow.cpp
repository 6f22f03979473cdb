// Control flow in the chain: cond, map and while_loop become jumps over (and back to)
// their subgraphs' instructions, which are emitted inline. ExecuTorch's program has no
// nested graphs; its instructions for this are JumpFalseCall (go to instruction k when a
// Bool value, or every element of a Bool tensor, is false), MoveCall (value `to` becomes
// value `from`) and the `executorch_prim` integer ops (loop counters, symbolic
// predicates). The layouts (labels are instruction indices):
//
//   cond(pred, T, F, ops):      JumpFalse(pred -> F) | T | Move(T's results -> outs)
//                               | JumpFalse(False -> end) | F: F | Move(F's results -> outs)
//   map(f, xs, args):           n = size 0 of xs[0]; out_j = zeros([0, ...]); i = 0
//                               top: more = (i < n) | JumpFalse(more -> end)
//                               | xs_k[i] -> slice_k (select_copy) | f
//                               | et_copy_index(out_j, f's result j, i) | i += 1
//                               | JumpFalse(False -> top)
//   while_loop(c, body, init):  carry = clone(init)
//                               top: c(carry) | JumpFalse(c's result -> end) | body(carry)
//                               | carry = clone(body's results) | JumpFalse(False -> top)
//
// A cond's outputs are tensors without memory of their own: the taken branch's Move makes
// them its results (the memory planner keeps those alive while the outputs are used). A
// map's outputs are planned DYNAMIC_BOUND tensors, made empty before the loop, that
// et_copy_index grows by one row per iteration; a while_loop's carried values are planned tensors copied in place. The
// memory planner keeps every value a loop reads or writes across iterations alive for the
// whole loop (Emitter::loops_).
#include <fmt/format.h>

#include <algorithm>

#include "ingot/exporters/executorch/emitter_internal.h"

namespace ingot::exporters::executorch {

size_t Emitter::jump_false(int32_t cond, int32_t destination) {
  Instruction in;
  in.kind = Instruction::Kind::JumpFalse;
  in.index = destination;
  in.args = {cond};
  push(std::move(in));
  return plan_.instructions.size() - 1;
}

void Emitter::move(int32_t from, int32_t to) {
  Instruction in;
  in.kind = Instruction::Kind::Move;
  in.args = {from, to};
  push(std::move(in));
}

std::vector<int32_t> Emitter::node_tensors(const ir::Node& n, size_t first_arg) {
  std::vector<int32_t> v;
  for (size_t i = first_arg; i < n.args.size(); ++i)
    v.push_back(tensor_of(std::get<ir::TensorRef>(n.args[i]).id, n));
  return v;
}

std::vector<int32_t> Emitter::emit_subgraph(const ir::Graph& g,
                                            const std::vector<int32_t>& inputs) {
  INGOT_CHECK(g.inputs.size() == inputs.size(), InternalError,
              "[executorch] a subgraph takes {} inputs, its node passes {}", g.inputs.size(),
              inputs.size());
  // The subgraph's value ids are its own: a fresh scope, and run-time integers computed
  // inside (which run only when the subgraph runs) and the tensors that size symbols are
  // read from are not reused after it.
  std::map<ir::ValueId, int32_t> outer = std::move(tensors_);
  std::map<std::string, int32_t> outer_ints = ints_;
  std::map<std::string, std::pair<int32_t, int64_t>> outer_sources = symbol_sources_;
  tensors_.clear();
  for (size_t i = 0; i < inputs.size(); ++i) tensors_[g.inputs[i]] = inputs[i];
  emit_nodes(g);
  std::vector<int32_t> outs;
  for (ir::ValueId o : g.outputs) outs.push_back(tensors_.at(o));
  tensors_ = std::move(outer);
  ints_ = std::move(outer_ints);
  symbol_sources_ = std::move(outer_sources);
  return outs;
}

bool Emitter::emit_control_flow(const ir::Graph& g, const ir::Node& n) {
  if (n.subgraphs.empty()) return false;
  if (n.target == "cond") {
    emit_cond(g, n);
  } else if (n.target == "map") {
    emit_map(g, n);
  } else if (n.target == "while_loop") {
    emit_while_loop(g, n);
  } else {
    INGOT_THROW(NotSupportedError,
                "[executorch] '{}' (called at {}) owns subgraphs and is not a control-flow "
                "operator the ExecuTorch exporter emits (cond, map, while_loop)",
                n.target, n.source.str());
  }
  current_ = nullptr;
  return true;
}

namespace {

// An integer expression that is positive exactly when the predicate `e` holds, so a
// predicate combining comparisons is one executorch_prim::lt.Scalar(0, margin) (the prim
// ops have no and / or / not). Every operand is an integer, so "holds" means margin >= 1
// and "fails" margin <= 0, which `not` (1 - m) and the junctions (min / max) keep:
//   x < y: y - x    x <= y: y - x + 1    x == y: 1 - (x - y)^2    x != y: (x - y)^2
//   not p: 1 - m(p)    p and q: min(m(p), m(q))    p or q: max(m(p), m(q))    True: 1, False: 0
sym::Expr margin_of(const sym::Expr& e) {
  auto diff = [&] { return sym::sub(e->args[0], e->args[1]); };
  switch (e.kind()) {
    case sym::Kind::Boolean:
      return sym::integer(e.value() != 0 ? 1 : 0);
    case sym::Kind::Lt:
      return sym::sub(e->args[1], e->args[0]);
    case sym::Kind::Le:
      return sym::add(sym::sub(e->args[1], e->args[0]), sym::integer(1));
    case sym::Kind::Eq:
      return sym::sub(sym::integer(1), sym::mul(diff(), diff()));
    case sym::Kind::Ne:
      return sym::mul(diff(), diff());
    case sym::Kind::Not:
      return sym::sub(sym::integer(1), margin_of(e->args[0]));
    case sym::Kind::And:
    case sym::Kind::Or: {
      sym::Expr m = margin_of(e->args.at(0));
      for (size_t i = 1; i < e->args.size(); ++i)
        m = e.kind() == sym::Kind::And ? sym::min(m, margin_of(e->args[i]))
                                       : sym::max(m, margin_of(e->args[i]));
      return m;
    }
    default:
      INGOT_THROW(InternalError, "[executorch] '{}' is not a predicate", e.str());
  }
}

}  // namespace

int32_t Emitter::bool_of(const sym::Expr& e, bool& negated, const ir::Node& n) {
  auto compare = [&](const char* prim, const sym::Expr& a, const sym::Expr& b) {
    const int32_t r = add(BoolValue{false});
    call(prim, {int_of(a), int_of(b), r});
    return r;
  };
  negated = false;
  switch (e.kind()) {
    case sym::Kind::Boolean:
      return add(BoolValue{e.value() != 0});
    case sym::Kind::Eq:
      return compare("executorch_prim::eq.Scalar", e->args[0], e->args[1]);
    case sym::Kind::Lt:
      return compare("executorch_prim::lt.Scalar", e->args[0], e->args[1]);
    case sym::Kind::Le:
      return compare("executorch_prim::le.Scalar", e->args[0], e->args[1]);
    case sym::Kind::Ne:
      negated = true;  // (no ne prim op: Eq, with the branches swapped)
      return compare("executorch_prim::eq.Scalar", e->args[0], e->args[1]);
    case sym::Kind::Not: {
      const int32_t r = bool_of(e->args[0], negated, n);
      negated = !negated;
      return r;
    }
    case sym::Kind::And:
    case sym::Kind::Or:
      return compare("executorch_prim::lt.Scalar", sym::integer(0), margin_of(e));
    default:
      INGOT_THROW(InternalError,
                  "[executorch] the predicate '{}' of '{}' (called at {}) is not a boolean "
                  "expression",
                  e.str(), n.target, n.source.str());
  }
}

// cond: args [pred, operands..., captures...]; subgraphs {true, false}, each taking every
// argument after the predicate.
void Emitter::emit_cond(const ir::Graph& g, const ir::Node& n) {
  current_ = &n;
  int32_t pred = -1;
  bool negated = false;
  if (const auto* t = std::get_if<ir::TensorRef>(&n.args.at(0))) {
    pred = tensor_of(t->id, n);  // a one-element Bool tensor
  } else {
    pred = bool_of(std::get<sym::Expr>(n.args[0]), negated, n);
  }
  const std::vector<int32_t> operands = node_tensors(n, 1);
  std::vector<int32_t> results;
  for (ir::ValueId o : n.outputs) {
    const ir::ValueInfo& info = g.value(o);
    const int32_t v = new_tensor(info.dtype, info.sizes, false);  // a branch's result, moved in
    tensors_[o] = v;
    results.push_back(v);
  }
  const ir::Graph& taken_if_true = *n.subgraphs.at(negated ? 1 : 0);
  const ir::Graph& taken_if_false = *n.subgraphs.at(negated ? 0 : 1);
  auto branch = [&](const ir::Graph& sub) {
    const std::vector<int32_t> outs = emit_subgraph(sub, operands);
    current_ = &n;
    for (size_t i = 0; i < outs.size(); ++i) move(outs[i], results[i]);
  };
  const size_t to_false = jump_false(pred);
  branch(taken_if_true);
  const size_t to_end = jump_false(add(BoolValue{false}));
  patch_jump(to_false, here());
  branch(taken_if_false);
  patch_jump(to_end, here());
}

// map: args [num_xs, xs..., args..., captures...]; subgraph {f} taking one slice of each
// xs (dim 0) then the rest; outputs [n, ...] stack f's results. The test is at the top, so
// n = 0 runs the body zero times; each output is first made empty ([0, its other sizes],
// computed at run time), which is what it is then (an unrun body would otherwise leave it
// at its bound or the previous call's rows), and what et_copy_index grows one row per
// iteration from on every run.
void Emitter::emit_map(const ir::Graph& g, const ir::Node& n) {
  current_ = &n;
  const size_t num_xs = size_t(std::get<sym::Expr>(n.args.at(0)).value());
  const std::vector<int32_t> all = node_tensors(n, 1);
  const ir::ValueInfo& x0 = g.value(std::get<ir::TensorRef>(n.args.at(1)).id);
  const int32_t count = int_of(x0.sizes.at(0));
  std::vector<int32_t> results;
  for (ir::ValueId o : n.outputs) {
    const ir::ValueInfo& info = g.value(o);
    const int32_t v = new_tensor(info.dtype, info.sizes, true);
    std::get<TensorValue>(plan_.values[size_t(v)]).dynamism = pte::Dynamism::DynamicBound;
    IntListValue empty{{int_const(0)}};
    for (size_t d = 1; d < info.sizes.size(); ++d) empty.items.push_back(int_of(info.sizes[d]));
    call("aten::zeros.out", {add(std::move(empty)), v, v});
    tensors_[o] = v;
    produced_.insert(v);
    results.push_back(v);
  }
  const int32_t i = add(IntValue{0});
  call("executorch_prim::mul.Scalar", {i, int_const(0), i});  // i = 0 at every run
  std::vector<int32_t> inputs;
  for (size_t k = 0; k < num_xs; ++k) {
    const ir::ValueInfo& x = g.value(std::get<ir::TensorRef>(n.args.at(1 + k)).id);
    inputs.push_back(new_tensor(x.dtype, {x.sizes.begin() + 1, x.sizes.end()}, true));
  }
  inputs.insert(inputs.end(), all.begin() + long(num_xs), all.end());
  const int32_t top = here();
  const int32_t more = add(BoolValue{false});
  call("executorch_prim::lt.Scalar", {i, count, more});
  const size_t exit = jump_false(more);
  for (size_t k = 0; k < num_xs; ++k)
    call("aten::select_copy.int_out", {all[k], int_const(0), i, inputs[k], inputs[k]});
  const std::vector<int32_t> outs = emit_subgraph(*n.subgraphs.at(0), inputs);
  current_ = &n;
  for (size_t j = 0; j < outs.size(); ++j)
    call("executorch_prim::et_copy_index.tensor", {results[j], outs[j], i});
  call("executorch_prim::add.Scalar", {i, int_const(1), i});
  jump_false(add(BoolValue{false}), top);
  loops_.emplace_back(top, here() - 1);
  patch_jump(exit, here());
}

// while_loop: args [num_carried, carried..., additional..., captures...]; subgraphs
// {cond_fn, body_fn}, both taking the carried values then the rest.
void Emitter::emit_while_loop(const ir::Graph& g, const ir::Node& n) {
  current_ = &n;
  const size_t num_carried = size_t(std::get<sym::Expr>(n.args.at(0)).value());
  const std::vector<int32_t> all = node_tensors(n, 1);
  std::vector<int32_t> inputs;
  for (size_t k = 0; k < num_carried; ++k) {
    const ir::ValueInfo& info = g.value(n.outputs.at(k));
    const int32_t c = new_tensor(info.dtype, info.sizes, true);
    call("aten::clone.out", {all[k], none(), c, c});
    tensors_[n.outputs[k]] = c;
    produced_.insert(c);
    inputs.push_back(c);
  }
  inputs.insert(inputs.end(), all.begin() + long(num_carried), all.end());
  const int32_t top = here();
  const std::vector<int32_t> go_on = emit_subgraph(*n.subgraphs.at(0), inputs);
  current_ = &n;
  const size_t exit = jump_false(go_on.at(0));
  std::vector<int32_t> next = emit_subgraph(*n.subgraphs.at(1), inputs);
  current_ = &n;
  // A result that is one of the loop's inputs (a carried value passed on, or swapped) is
  // set aside first, so no write-back reads a carried value already overwritten.
  for (size_t k = 0; k < num_carried; ++k) {
    if (next[k] == inputs[k]) continue;
    if (std::find(inputs.begin(), inputs.end(), next[k]) == inputs.end()) continue;
    const ir::ValueInfo& info = g.value(n.outputs[k]);
    const int32_t t = new_tensor(info.dtype, info.sizes, true);
    call("aten::clone.out", {next[k], none(), t, t});
    next[k] = t;
  }
  for (size_t k = 0; k < num_carried; ++k)
    if (next[k] != inputs[k]) call("aten::clone.out", {next[k], none(), inputs[k], inputs[k]});
  jump_false(add(BoolValue{false}), top);
  loops_.emplace_back(top, here() - 1);
  patch_jump(exit, here());
}

}  // namespace ingot::exporters::executorch
