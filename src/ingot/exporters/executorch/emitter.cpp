#include "ingot/exporters/executorch/emitter.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>

#include "ingot/core/error.h"
#include "ingot/exporters/executorch/emitter_internal.h"
#include "ingot/exporters/executorch/kernels.h"
#include "ingot/exporters/executorch/memory_planner.h"
#include "ingot/exporters/executorch/xnnpack_partition.h"
#include "ingot/sym/value_ranges.h"

namespace ingot::exporters::executorch {

pte::ScalarType scalar_type_of(DType t) {
  switch (t) {
    case DType::Bool:
      return pte::ScalarType::Bool;
    case DType::U8:
      return pte::ScalarType::Byte;
    case DType::I8:
      return pte::ScalarType::Char;
    case DType::I16:
      return pte::ScalarType::Short;
    case DType::I32:
      return pte::ScalarType::Int;
    case DType::I64:
      return pte::ScalarType::Long;
    case DType::F16:
      return pte::ScalarType::Half;
    case DType::BF16:
      return pte::ScalarType::BFloat16;
    case DType::F32:
      return pte::ScalarType::Float;
    case DType::F64:
      return pte::ScalarType::Double;
  }
  return pte::ScalarType::Float;
}

size_t element_size(pte::ScalarType t) {
  switch (t) {
    case pte::ScalarType::Bool:
    case pte::ScalarType::Byte:
    case pte::ScalarType::Char:
      return 1;
    case pte::ScalarType::Short:
    case pte::ScalarType::Half:
    case pte::ScalarType::BFloat16:
      return 2;
    case pte::ScalarType::Int:
    case pte::ScalarType::Float:
      return 4;
    default:
      return 8;
  }
}

int32_t Emitter::new_tensor(DType dtype, const std::vector<sym::Expr>& sizes, bool planned,
                            const std::string& name) {
  TensorValue t;
  t.scalar_type = scalar_type_of(dtype);
  for (const sym::Expr& e : sizes) {
    if (!e.is_integer()) t.dynamism = pte::Dynamism::DynamicBound;
    const int64_t ub = upper_bound(e);
    INGOT_CHECK(ub <= std::numeric_limits<int32_t>::max(), NotSupportedError,
                "[executorch] size bound {} of '{}' does not fit the format's int32 sizes", ub,
                e.str());
    t.sizes.push_back(int32_t(ub));
  }
  t.name = name;
  const int32_t v = add(std::move(t));
  if (planned) planned_.insert(v);
  return v;
}

int32_t Emitter::int_of(const sym::Expr& e) {
  if (e.is_integer()) return int_const(e.value());
  const std::string key = e.str();
  if (auto it = ints_.find(key); it != ints_.end()) return it->second;
  int32_t r = -1;
  switch (e.kind()) {
    case sym::Kind::Symbol: {
      auto src = symbol_sources_.find(e.name());
      INGOT_CHECK(src != symbol_sources_.end(), NotSupportedError,
                  "[executorch] symbol '{}' is not the size of any input (data-dependent "
                  "sizes are not supported by the ExecuTorch exporter yet)",
                  e.name());
      r = add(IntValue{0});
      call("aten::sym_size.int", {src->second.first, int_const(src->second.second), r});
      break;
    }
    case sym::Kind::Add: {
      const sym::Linear lin = sym::to_linear(e);
      for (const auto& [monomial, coeff] : lin.terms) {
        int32_t term = int_of(monomial);
        if (coeff != 1) term = binary_prim("executorch_prim::mul.Scalar", term, int_const(coeff));
        r = r < 0 ? term : binary_prim("executorch_prim::add.Scalar", r, term);
      }
      if (lin.constant != 0)
        r = binary_prim("executorch_prim::add.Scalar", r, int_const(lin.constant));
      break;
    }
    case sym::Kind::Mul:
      for (const sym::Expr& f : e->args)
        r = r < 0 ? int_of(f) : binary_prim("executorch_prim::mul.Scalar", r, int_of(f));
      break;
    case sym::Kind::FloorDiv:
      r = binary_prim("executorch_prim::floordiv.Scalar", int_of(e->args[0]), int_of(e->args[1]));
      break;
    case sym::Kind::Mod:
      r = binary_prim("executorch_prim::mod.Scalar", int_of(e->args[0]), int_of(e->args[1]));
      break;
    case sym::Kind::Min:
      r = binary_prim("executorch_prim::sym_min.Scalar", int_of(e->args[0]), int_of(e->args[1]));
      break;
    case sym::Kind::Max:
      r = binary_prim("executorch_prim::sym_max.Scalar", int_of(e->args[0]), int_of(e->args[1]));
      break;
    default:
      INGOT_THROW(NotSupportedError,
                  "[executorch] the symbolic expression '{}' has no ExecuTorch prim op "
                  "(add executorch_prim lowering in emitter.cpp int_of)",
                  key);
  }
  ints_[key] = r;
  return r;
}

void Emitter::bind_inputs() {
  const ir::Graph& g = *p_.graph;
  std::set<std::string> mutated_buffers, mutated_inputs;
  for (const OutputSpec& o : p_.signature.outputs) {
    if (o.kind == OutputKind::BufferMutation) mutated_buffers.insert(o.target);
    if (o.kind == OutputKind::UserInputMutation) mutated_inputs.insert(o.target);
  }
  for (size_t i = 0; i < p_.signature.inputs.size(); ++i) {
    const InputSpec& in = p_.signature.inputs[i];
    const ir::ValueId id = g.inputs[i];
    const ir::ValueInfo& info = g.value(id);
    if (in.kind == InputKind::UserInput) {
      const int32_t v = new_tensor(info.dtype, info.sizes, o_.alloc_graph_input);
      if (o_.alloc_graph_input) whole_run_.erase(v);
      tensors_[id] = v;
      plan_.inputs.push_back(v);
      summary_.input_names.push_back(in.target);
      for (size_t d = 0; d < info.sizes.size(); ++d) {
        const sym::Expr& e = info.sizes[d];
        if (e.is_symbol() && !symbol_sources_.contains(e.name()))
          symbol_sources_[e.name()] = {v, int64_t(d)};
      }
      continue;
    }
    const Tensor& data =
        in.kind == InputKind::ConstantTensor ? p_.constants.at(in.target) : p_.state.at(in.target);
    if (in.kind == InputKind::Buffer && mutated_buffers.contains(in.target)) {
      // Program state: planned for the whole run, initialised from segment 1 at load.
      INGOT_CHECK(o_.alloc_mutable_buffers, NotSupportedError,
                  "[executorch] buffer '{}' is mutated and alloc_mutable_buffers is false: "
                  "ExecuTorch keeps program state in planned memory. Set "
                  "alloc_mutable_buffers=true, or make the state a user input (the decode "
                  "layout's cache)",
                  in.target);
      const int32_t v = new_tensor(info.dtype, info.sizes, true, in.target);
      out_.mutable_state.push_back(data);
      std::get<TensorValue>(plan_.values[size_t(v)]).mutable_state_index =
          uint32_t(out_.mutable_state.size());
      whole_run_.insert(v);
      tensors_[id] = v;
      continue;
    }
    const int32_t v = new_tensor(info.dtype, info.sizes, false);
    out_.constants.push_back(data);
    std::get<TensorValue>(plan_.values[size_t(v)]).constant_index = uint32_t(out_.constants.size());
    tensors_[id] = v;
  }
}

void Emitter::emit_nodes(const ir::Graph& g) {
  // backend="xnnpack": neighbouring delegable nodes gathered into one DelegateCall.
  std::optional<xnnpack::Partition> partition;
  if (o_.backend == "xnnpack") partition.emplace(*this, g);
  for (const ir::Node& n : g.nodes()) {
    if (n.target == "assert") continue;  // runtime asserts: not expressible (noted)
    if (partition && !n.subgraphs.empty()) partition->close();
    if (emit_control_flow(g, n)) continue;
    current_ = &n;
    bound_data_dependent_sizes(g, n);
    current_outputs_.clear();
    for (ir::ValueId o : n.outputs) {
      const ir::ValueInfo& info = g.value(o);
      int32_t v = -1;
      if (info.is_tensor()) {
        v = new_tensor(info.dtype, info.sizes, true);
        tensors_[o] = v;
        produced_.insert(v);
      } else {
        v = add(IntValue{0});
        ints_[info.expr.str()] = v;
      }
      current_outputs_.push_back(v);
    }
    KernelContext k(*this, g, n);
    if (partition) {
      if (partition->add(k)) {
        record_symbol_sources(g, n);
        current_ = nullptr;
        continue;
      }
      partition->before(n);
    }
    const KernelFn* fn = find_kernel(n.target);
    if (fn == nullptr)
      INGOT_THROW(NotSupportedError,
                  "[executorch] op '{}' has no ExecuTorch kernel mapping (called at {}). Add "
                  "one in src/ingot/exporters/executorch/kernels_*.cpp with "
                  "INGOT_EXECUTORCH_KERNEL(id, \"{}\", fn) calling a registered `.out` kernel "
                  "(tools/executorch/list_kernels.py lists them), or replace the op at trace "
                  "time with INGOT_REGISTER_OP_PATCH(name, \"executorch\", \"{}\", ...) "
                  "(docs/executorch.md)",
                  n.target, n.source.str(), n.target, n.target);
    (*fn)(k);
    record_symbol_sources(g, n);
    current_ = nullptr;
  }
  if (partition) partition->close();
}

void Emitter::bound_data_dependent_sizes(const ir::Graph& g, const ir::Node& n) {
  const SizeBoundsFn* bounds = find_size_bounds(n.target);
  if (bounds == nullptr) return;
  KernelContext k(*this, g, n);
  for (const auto& [size, hi] : (*bounds)(k)) {
    if (!size.is_symbol()) continue;  // (a size the tracer already knows)
    auto [it, fresh] = data_dependent_bounds_.try_emplace(size.name(), hi);
    if (!fresh) it->second = std::min(it->second, hi);
  }
}

void Emitter::record_symbol_sources(const ir::Graph& g, const ir::Node& n) {
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    auto t = tensors_.find(n.outputs[k]);
    if (t == tensors_.end()) continue;
    const ir::ValueInfo& info = g.value(n.outputs[k]);
    for (size_t d = 0; d < info.sizes.size(); ++d) {
      const sym::Expr& e = info.sizes[d];
      if (e.is_symbol() && !symbol_sources_.contains(e.name()) && !ints_.contains(e.str()))
        symbol_sources_[e.name()] = {t->second, int64_t(d)};
    }
  }
}

void Emitter::bind_outputs() {
  const ir::Graph& g = *p_.graph;
  std::set<int32_t> used;
  std::map<std::string, ir::ValueId> inputs_by_target;
  for (size_t i = 0; i < p_.signature.inputs.size(); ++i)
    inputs_by_target[p_.signature.inputs[i].target] = g.inputs[i];
  size_t user = 0;
  std::vector<std::string> paths = p_.out_spec.leaf_paths("");
  for (size_t j = 0; j < p_.signature.outputs.size(); ++j) {
    const OutputSpec& o = p_.signature.outputs[j];
    const ir::ValueId id = g.outputs[j];
    int32_t v = tensors_.at(id);
    if (o.kind == OutputKind::BufferMutation) {
      write_backs_.emplace_back(tensors_.at(inputs_by_target.at(o.target)), v);
      continue;
    }
    // A method output is its own tensor: copy inputs, constants and repeated values.
    if (!produced_.contains(v) || used.contains(v)) {
      const ir::ValueInfo& info = g.value(id);
      const int32_t c = new_tensor(info.dtype, info.sizes, true);
      call("aten::clone.out", {v, none(), c, c});
      produced_.insert(c);
      v = c;
    }
    used.insert(v);
    if (!o_.alloc_graph_output) planned_.erase(v);
    plan_.outputs.push_back(v);
    if (o.kind == OutputKind::UserOutput) {
      std::string name = user < paths.size() ? paths[user] : "";
      if (name.empty() || name[0] == '[')
        name = paths.size() == 1 ? "output" : fmt::format("output_{}", user);
      summary_.output_names.push_back(name);
      ++user;
    } else {
      summary_.output_names.push_back("output." + o.target);
    }
  }
  // Mutable state written back in place at the end of the chain.
  for (const auto& [state, value] : write_backs_)
    call("aten::copy.out", {state, value, add(BoolValue{false}), state, state});
}

void Emitter::plan_memory_of_method(EmitSummary& s) {
  const int64_t end = int64_t(plan_.instructions.size());
  // The instructions that touch each value (directly or as an item of a list argument).
  std::map<int32_t, std::pair<int64_t, int64_t>> used;  // value -> (first, last)
  auto touch = [&](int32_t v, int64_t i) {
    auto [it, fresh] = used.try_emplace(v, i, i);
    if (!fresh) {
      it->second.first = std::min(it->second.first, i);
      it->second.second = std::max(it->second.second, i);
    }
  };
  for (int64_t i = 0; i < end; ++i) {
    for (int32_t a : plan_.instructions[size_t(i)].args) {
      touch(a, i);
      const EValue& ev = plan_.values[size_t(a)];
      const std::vector<int32_t>* items = nullptr;
      if (const auto* l = std::get_if<TensorListValue>(&ev)) items = &l->items;
      if (const auto* l = std::get_if<OptionalTensorListValue>(&ev)) items = &l->items;
      if (!items) continue;
      for (int32_t x : *items)
        if (x >= 0) touch(x, i);
    }
  }
  // Inputs exist before the first instruction, outputs and state after the last.
  for (int32_t v : plan_.inputs)
    if (auto it = used.find(v); it != used.end()) it->second.first = -1;
  for (int32_t v : plan_.outputs)
    if (auto it = used.find(v); it != used.end()) it->second.second = end;
  for (int32_t v : whole_run_) used[v] = {-1, end};
  // A loop runs its instructions again: a value touched both inside a loop and outside it
  // (read by every iteration, or written by one and read after) lives through the whole
  // loop. Values made and used within one iteration keep their straight-line lifetime.
  // (Inner loops come before outer ones in loops_, so an outer extension sees the inner.)
  for (const auto& [first, last] : loops_) {
    for (auto& [v, life] : used) {
      const bool inside = life.second >= first && life.first <= last;
      const bool outside = life.first < first || life.second > last;
      if (inside && outside) {
        life.first = std::min(life.first, first);
        life.second = std::max(life.second, last);
      }
    }
  }
  // Move(from, to): `to` is `from` from then on, so `from`'s memory lives as long as `to`
  // is used. In reverse order, so a chain of moves (nested conds) reaches the first.
  for (int64_t i = end - 1; i >= 0; --i) {
    const Instruction& in = plan_.instructions[size_t(i)];
    if (in.kind != Instruction::Kind::Move) continue;
    auto to = used.find(in.args[1]);
    if (to != used.end())
      used[in.args[0]].second = std::max(used[in.args[0]].second, to->second.second);
  }
  std::map<int32_t, PlannedBuffer> life;
  for (int32_t v : planned_) {
    const auto& t = std::get<TensorValue>(plan_.values[size_t(v)]);
    int64_t numel = 1;
    for (int32_t d : t.sizes) numel *= d;
    PlannedBuffer b;
    b.bytes = uint64_t(numel) * element_size(t.scalar_type);
    b.first = end;
    b.last = -1;
    if (auto it = used.find(v); it != used.end()) {
      b.first = it->second.first;
      b.last = it->second.second;
    }
    life[v] = b;
  }
  for (int32_t v : plan_.inputs)  // (an input no instruction reads)
    if (life.contains(v)) life[v].first = -1;
  for (int32_t v : plan_.outputs)
    if (life.contains(v)) life[v].last = end;
  std::vector<int32_t> ids;
  std::vector<PlannedBuffer> buffers;
  for (auto& [v, b] : life) {
    if (b.last < b.first) b.last = b.first;  // written, never read
    ids.push_back(v);
    buffers.push_back(b);
    s.unplanned_bytes_if_no_reuse += int64_t(b.bytes);
  }
  const MemoryPlan mp = plan_memory(buffers);
  for (size_t i = 0; i < ids.size(); ++i)
    std::get<TensorValue>(plan_.values[size_t(ids[i])]).allocation = Allocation{1, mp.offsets[i]};
  plan_.buffer_sizes = {0, int64_t(mp.arena_bytes)};
  s.planned_bytes = int64_t(mp.arena_bytes);
  s.planned_tensors = int64_t(ids.size());
}

// A weight that only a delegate reads lives in the delegate's payload: its constant
// tensor keeps its place in the value table (no data, unplanned) and its bytes leave the
// constant segment, so the .pte holds each weight once.
void Emitter::drop_constants_moved_into_delegates() {
  std::set<int32_t> used(plan_.inputs.begin(), plan_.inputs.end());
  used.insert(plan_.outputs.begin(), plan_.outputs.end());
  for (const Instruction& in : plan_.instructions) used.insert(in.args.begin(), in.args.end());
  for (const EValue& v : plan_.values)  // lists name their items by index
    std::visit(
        [&](const auto& x) {
          if constexpr (requires { x.items; }) {
            for (auto item : x.items)
              if constexpr (std::is_same_v<decltype(item), int32_t>) used.insert(item);
          }
        },
        v);
  for (size_t i = 0; i < plan_.values.size(); ++i) {
    auto* t = std::get_if<TensorValue>(&plan_.values[i]);
    if (t == nullptr || t->constant_index == 0 || used.contains(int32_t(i))) continue;
    out_.constants[t->constant_index - 1] = Tensor::empty({0}, DType::F32);
    t->constant_index = 0;
  }
}

EmitSummary Emitter::run() {
  bind_inputs();
  emit_nodes(*p_.graph);
  bind_outputs();
  if (o_.backend != "portable") drop_constants_moved_into_delegates();
  plan_memory_of_method(summary_);
  out_.plans.push_back(std::move(plan_));
  return summary_;
}

// --- KernelContext ---------------------------------------------------------------------

bool KernelContext::is_none(size_t i) const {
  return i >= n_.args.size() || std::holds_alternative<std::monostate>(n_.args[i]);
}

int32_t KernelContext::tensor(size_t i) {
  const auto* t = i < n_.args.size() ? std::get_if<ir::TensorRef>(&n_.args[i]) : nullptr;
  if (t == nullptr) unsupported(fmt::format("argument {} is not a tensor", i));
  return e_.tensor_of(t->id, n_);
}
int32_t KernelContext::optional_tensor(size_t i) {
  return is_none(i) ? none() : tensor(i);
}
int32_t KernelContext::tensor_list(size_t i) {
  TensorListValue l;
  for (const auto& x : std::get<ir::OptionalValueList>(n_.args.at(i))) {
    if (!x) unsupported(fmt::format("argument {} has a None in a Tensor[]", i));
    l.items.push_back(e_.tensor_of(*x, n_));
  }
  return e_.add(std::move(l));
}
int32_t KernelContext::optional_tensor_list(size_t i) {
  OptionalTensorListValue l;
  for (const auto& x : std::get<ir::OptionalValueList>(n_.args.at(i)))
    l.items.push_back(x ? e_.tensor_of(*x, n_) : -1);
  return e_.add(std::move(l));
}
int32_t KernelContext::int_(size_t i) {
  const ir::Argument& a = n_.args.at(i);
  if (const auto* e = std::get_if<sym::Expr>(&a)) return e_.int_of(*e);
  if (const auto* s = std::get_if<Scalar>(&a)) return int_const(s->to_int());
  if (const auto* b = std::get_if<bool>(&a)) return int_const(*b);
  unsupported(fmt::format("argument {} is not an integer", i));
}
int32_t KernelContext::optional_int(size_t i) {
  return is_none(i) ? none() : int_(i);
}
int32_t KernelContext::int_list(size_t i) {
  const ir::Argument& a = n_.args.at(i);
  if (const auto* l = std::get_if<std::vector<sym::Expr>>(&a)) return int_list_of(*l);
  if (const auto* e = std::get_if<sym::Expr>(&a)) return int_list_of({*e});
  unsupported(fmt::format("argument {} is not an int list", i));
}
int32_t KernelContext::optional_int_list(size_t i) {
  return is_none(i) ? none() : int_list(i);
}
int32_t KernelContext::double_(size_t i) {
  const ir::Argument& a = n_.args.at(i);
  if (const auto* d = std::get_if<double>(&a)) return double_const(*d);
  if (const auto* s = std::get_if<Scalar>(&a)) return double_const(s->to_double());
  if (const auto* e = std::get_if<sym::Expr>(&a); e && e->is_integer())
    return double_const(double(e->value()));
  unsupported(fmt::format("argument {} is not a float", i));
}
int32_t KernelContext::boolean(size_t i) {
  const ir::Argument& a = n_.args.at(i);
  if (const auto* b = std::get_if<bool>(&a)) return bool_const(*b);
  if (const auto* s = std::get_if<Scalar>(&a)) return bool_const(s->to_bool());
  unsupported(fmt::format("argument {} is not a bool", i));
}
int32_t KernelContext::scalar(size_t i) {
  const ir::Argument& a = n_.args.at(i);
  if (const auto* s = std::get_if<Scalar>(&a)) {
    if (s->is_bool()) return bool_const(s->to_bool());
    if (s->is_integral()) return int_const(s->to_int());
    return double_const(s->to_double());
  }
  if (const auto* d = std::get_if<double>(&a)) return double_const(*d);
  if (const auto* b = std::get_if<bool>(&a)) return bool_const(*b);
  if (const auto* e = std::get_if<sym::Expr>(&a)) return e_.int_of(*e);
  unsupported(fmt::format("argument {} is not a scalar", i));
}
int32_t KernelContext::optional_scalar(size_t i) {
  return is_none(i) ? none() : scalar(i);
}
int32_t KernelContext::optional_string(size_t i) {
  if (is_none(i)) return none();
  return string_const(std::get<std::string>(n_.args.at(i)));
}
int32_t KernelContext::optional_dtype(size_t i) {
  if (is_none(i)) return none();
  return int_const(int64_t(scalar_type_of(std::get<DType>(n_.args.at(i)))));
}
int32_t KernelContext::none() {
  return e_.none();
}
int32_t KernelContext::int_const(int64_t v) {
  return e_.int_const(v);
}
int32_t KernelContext::bool_const(bool v) {
  return e_.add(BoolValue{v});
}
int32_t KernelContext::double_const(double v) {
  return e_.add(DoubleValue{v});
}
int32_t KernelContext::string_const(const std::string& s) {
  return e_.add(StringValue{s});
}
int32_t KernelContext::int_list_of(const std::vector<sym::Expr>& items) {
  IntListValue l;
  for (const sym::Expr& x : items) l.items.push_back(e_.int_of(x));
  return e_.add(std::move(l));
}
int32_t KernelContext::int_of(const sym::Expr& e) {
  return e_.int_of(e);
}
int32_t KernelContext::value(EValue v) {
  return e_.add(std::move(v));
}
int32_t KernelContext::out(size_t k) {
  return e_.current_outputs().at(k);
}
int32_t KernelContext::temp(DType dtype, const std::vector<sym::Expr>& sizes) {
  return e_.new_tensor(dtype, sizes, true);
}
int64_t KernelContext::upper_bound(const sym::Expr& size) const {
  return e_.bound_of(size);
}
const Tensor* KernelContext::constant(size_t i) {
  const auto* t = i < n_.args.size() ? std::get_if<ir::TensorRef>(&n_.args[i]) : nullptr;
  return t == nullptr ? nullptr : e_.constant_data(e_.tensor_of(t->id, n_));
}
std::vector<int64_t> KernelContext::bound_sizes(int32_t tensor) const {
  const auto& sizes = e_.tensor_value(tensor).sizes;
  return {sizes.begin(), sizes.end()};
}
void KernelContext::delegate_call(const std::string& id, DelegateBlob payload,
                                  const std::vector<int32_t>& args) {
  e_.delegate_call(id, std::move(payload), args);
}
const ir::ValueInfo& KernelContext::in_info(size_t i) const {
  return g_.value(std::get<ir::TensorRef>(n_.args.at(i)).id);
}
const ir::ValueInfo& KernelContext::out_info(size_t k) const {
  return g_.value(n_.outputs.at(k));
}
void KernelContext::call(const std::string& kernel, const std::vector<int32_t>& args,
                         const std::vector<int32_t>& outs) {
  std::vector<int32_t> all = args;
  all.insert(all.end(), outs.begin(), outs.end());
  all.push_back(outs.size() == 1 ? outs[0] : e_.add(TensorListValue{outs}));
  e_.call(kernel, all);
}

void KernelContext::call_prim(const std::string& kernel,
                              const std::vector<int32_t>& args_and_return) {
  e_.call(kernel, args_and_return);
}
void KernelContext::unsupported(const std::string& what) const {
  INGOT_THROW(NotSupportedError,
              "[executorch] '{}' (called at {}) cannot be emitted for ExecuTorch: {}. Improve "
              "its mapping in src/ingot/exporters/executorch/kernels_*.cpp or add an "
              "executorch op patch (docs/executorch.md)",
              n_.target, n_.source.str(), what);
}

// --- entry points ----------------------------------------------------------------------

EmitSummary emit_method(const ExportedProgram& program, const EmitOptions& options, Program& out) {
  Emitter e(program, options, out);
  return e.run();
}

void emit_constant_method(const std::string& name, EValue value, Program& out) {
  ExecutionPlan plan;
  plan.name = name;
  const int32_t v = plan.add(std::move(value));
  plan.outputs.push_back(v);
  out.plans.push_back(std::move(plan));
}

}  // namespace ingot::exporters::executorch
