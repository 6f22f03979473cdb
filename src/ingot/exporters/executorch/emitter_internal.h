// The emitter of one method (emit_method's state), shared by emitter.cpp (values, kernel
// calls, signature, memory plan) and emitter_control_flow.cpp (cond / map / while_loop as
// jumps and moves). Internal to the ExecuTorch backend.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/exporters/executorch/emitter.h"
#include "ingot/exporters/executorch/kernels.h"
#include "ingot/sym/value_ranges.h"

namespace ingot::exporters::executorch {

pte::ScalarType scalar_type_of(DType t);
size_t element_size(pte::ScalarType t);

// The emitter of one method; KernelContext calls back into it.
class Emitter {
 public:
  Emitter(const ExportedProgram& p, const EmitOptions& o, Program& out) : p_(p), o_(o), out_(out) {
    plan_.name = o.method_name;
  }

  EmitSummary run();

  // --- what KernelContext uses ---
  int32_t tensor_of(ir::ValueId id, const ir::Node& n) {
    auto it = tensors_.find(id);
    INGOT_CHECK(it != tensors_.end(), InternalError,
                "[executorch] {}: value '{}' has no plan value", n.target,
                p_.graph->value(id).name);
    return it->second;
  }
  int32_t int_of(const sym::Expr& e);
  int32_t new_tensor(DType dtype, const std::vector<sym::Expr>& sizes, bool planned,
                     const std::string& name = "");
  int32_t add(EValue v) { return plan_.add(std::move(v)); }
  int32_t int_const(int64_t v) {
    auto it = int_consts_.find(v);
    if (it != int_consts_.end()) return it->second;
    return int_consts_[v] = add(IntValue{v});
  }
  int32_t none() {
    if (none_ < 0) none_ = add(NullValue{});
    return none_;
  }
  void call(const std::string& kernel, const std::vector<int32_t>& args) {
    const size_t dot = kernel.rfind('.');
    const size_t ns = kernel.find("::");
    OperatorRef op;
    if (dot == std::string::npos || (ns != std::string::npos && dot < ns)) {
      op = {kernel, ""};
    } else {
      op = {kernel.substr(0, dot), kernel.substr(dot + 1)};
    }
    Instruction in;
    in.index = plan_.operator_index(op);
    in.args = args;
    if (current_ && current_->source.known()) {
      in.file = std::filesystem::path(current_->source.file).filename().string();
      in.line = int32_t(current_->source.line);
      in.function = current_->source.function;
    }
    plan_.instructions.push_back(std::move(in));
  }
  const std::vector<int32_t>& current_outputs() const { return current_outputs_; }
  const TensorValue& tensor_value(int32_t v) const {
    return std::get<TensorValue>(plan_.values.at(size_t(v)));
  }
  const Tensor* constant_data(int32_t v) const {
    const auto* t = std::get_if<TensorValue>(&plan_.values.at(size_t(v)));
    if (t == nullptr || t->constant_index == 0) return nullptr;
    return &out_.constants.at(t->constant_index - 1);
  }
  void delegate_call(const std::string& id, DelegateBlob payload,
                     const std::vector<int32_t>& args) {
    out_.delegate_data.push_back(std::move(payload));
    plan_.delegates.push_back({id, uint32_t(out_.delegate_data.size() - 1)});
    Instruction in;
    in.kind = Instruction::Kind::Delegate;
    in.index = int32_t(plan_.delegates.size() - 1);
    in.args = args;
    if (current_ && current_->source.known()) {
      in.file = std::filesystem::path(current_->source.file).filename().string();
      in.line = int32_t(current_->source.line);
      in.function = current_->source.function;
    }
    plan_.instructions.push_back(std::move(in));
  }
  // Appends `in` with the current node's source line as its stack-trace frame.
  void push(Instruction in) {
    if (current_ && current_->source.known()) {
      in.file = std::filesystem::path(current_->source.file).filename().string();
      in.line = int32_t(current_->source.line);
      in.function = current_->source.function;
    }
    plan_.instructions.push_back(std::move(in));
  }
  const EmitOptions& options() const { return o_; }
  int64_t bound_of(const sym::Expr& size) const { return upper_bound(size); }
  void drop_constants_moved_into_delegates();
  // For the XNNPACK partition (xnnpack_partition.cpp): a result internal to a delegate
  // leaves the memory plan; the node whose source line the next instructions carry.
  void unplan(int32_t tensor) { planned_.erase(tensor); }
  const ir::Node* current_node() const { return current_; }
  void set_current_node(const ir::Node* n) { current_ = n; }

 private:
  // A symbol's range: the program's range constraints, narrowed by the bound a kernel
  // mapping gives a data-dependent size (nonzero's rows <= its input's elements).
  sym::ValueRange range_of(const sym::Expr& symbol) const {
    auto it = p_.range_constraints.find(symbol.name());
    sym::ValueRange r =
        it == p_.range_constraints.end() ? sym::ValueRange::at_least(0) : it->second.range;
    if (auto b = data_dependent_bounds_.find(symbol.name()); b != data_dependent_bounds_.end())
      r.hi = std::min(r.hi, b->second);
    return r;
  }
  int64_t upper_bound(const sym::Expr& e) const {
    if (e.is_integer()) return e.value();
    const sym::ValueRange r = sym::bound(e, [this](const sym::Expr& s) { return range_of(s); });
    INGOT_CHECK(r.hi != sym::ValueRange::kPosInf, NotSupportedError,
                "[executorch] size '{}' has no upper bound: ExecuTorch plans memory for the "
                "largest shape. Give every dynamic Dim a max (dynamic_shapes "
                "{{\"name\": ..., \"max\": N}}, or max_batch / max_seq with dynamic=true)",
                e.str());
    return r.hi;
  }
  int32_t binary_prim(const char* kernel, int32_t a, int32_t b) {
    const int32_t r = add(IntValue{0});
    call(kernel, {a, b, r});
    return r;
  }
  void bind_inputs();
  void emit_nodes(const ir::Graph& g);
  // Before node `n`'s outputs are made: the upper bounds its kernel mapping gives its
  // data-dependent sizes (INGOT_EXECUTORCH_SIZE_BOUNDS).
  void bound_data_dependent_sizes(const ir::Graph& g, const ir::Node& n);
  // After `n` is emitted: a size symbol first seen on one of its output tensors (an
  // unbacked size, nonzero's rows) is read from that tensor by aten::sym_size.int.
  void record_symbol_sources(const ir::Graph& g, const ir::Node& n);
  void bind_outputs();
  void plan_memory_of_method(EmitSummary& s);

  // --- control flow (emitter_control_flow.cpp) ---
  // Emits `g` inline with its inputs bound to the plan values `inputs`; returns the plan
  // values of its outputs. Values (and run-time integers) made inside stay inside.
  std::vector<int32_t> emit_subgraph(const ir::Graph& g, const std::vector<int32_t>& inputs);
  // cond / map / while_loop nodes; false for any other node.
  bool emit_control_flow(const ir::Graph& g, const ir::Node& n);
  void emit_cond(const ir::Graph& g, const ir::Node& n);
  void emit_map(const ir::Graph& g, const ir::Node& n);
  void emit_while_loop(const ir::Graph& g, const ir::Node& n);
  // A Bool value for a symbolic predicate; `negated`: the value is the predicate's negation.
  int32_t bool_of(const sym::Expr& e, bool& negated, const ir::Node& n);
  // Appends a jump (target patched later with patch_jump) / a move; returns its index.
  size_t jump_false(int32_t cond, int32_t destination = -1);
  void patch_jump(size_t instruction, int32_t destination) {
    plan_.instructions[instruction].index = destination;
  }
  void move(int32_t from, int32_t to);
  int32_t here() const { return int32_t(plan_.instructions.size()); }
  std::vector<int32_t> node_tensors(const ir::Node& n, size_t first_arg);

  const ExportedProgram& p_;
  const EmitOptions& o_;
  Program& out_;
  ExecutionPlan plan_;
  std::map<ir::ValueId, int32_t> tensors_;
  std::map<std::string, int32_t> ints_;  // expression -> Int value (by its text)
  std::map<int64_t, int32_t> int_consts_;
  std::map<std::string, std::pair<int32_t, int64_t>> symbol_sources_;  // -> (tensor, dim)
  std::map<std::string, int64_t> data_dependent_bounds_;  // symbol -> upper bound
  int32_t none_ = -1;
  std::set<int32_t> planned_;    // tensors the memory plan places
  std::set<int32_t> whole_run_;  // planned tensors live for the whole method (state)
  std::set<int32_t> produced_;   // tensors written by a kernel of this method
  std::vector<std::pair<int32_t, int32_t>> write_backs_;  // (state, new value)
  // Loops of the chain: [first, last] instruction; the last one jumps back to the first.
  std::vector<std::pair<int64_t, int64_t>> loops_;
  const ir::Node* current_ = nullptr;
  std::vector<int32_t> current_outputs_;
  EmitSummary summary_;
};

}  // namespace ingot::exporters::executorch
