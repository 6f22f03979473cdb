#include "ingot/runtime/executor/program_module.h"

#include <cstdlib>
#include <functional>

#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/execution_plan.h"
#include "ingot/runtime/executor/interpreter.h"
#include "ingot/runtime/executor/memory_pool.h"

namespace ingot::runtime {

ProgramModule::ProgramModule(const ExportedProgram& program)
    : ProgramModule(std::make_shared<const ExportedProgram>(program)) {}

ProgramModule::ProgramModule(std::shared_ptr<const ExportedProgram> program)
    : program_(std::move(program)) {
  // Buffers the program writes get an owned, writable copy (the originals may be mapped
  // read-only and belong to the eager model).
  for (const OutputSpec& o : program_->signature.outputs) {
    if (o.kind == OutputKind::BufferMutation)
      buffers_[o.target] = clone(program_->state.at(o.target));
  }
  // Graph input -> its new value, for every mutated buffer and user input.
  const ir::Graph& g = *program_->graph;
  std::map<ir::ValueId, ir::ValueId> writable;
  for (size_t o = 0; o < program_->signature.outputs.size(); ++o) {
    const OutputSpec& out = program_->signature.outputs[o];
    if (out.kind == OutputKind::UserOutput) continue;
    for (size_t i = 0; i < program_->signature.inputs.size(); ++i) {
      const InputSpec& in = program_->signature.inputs[i];
      const bool match = in.target == out.target &&
                         (out.kind == OutputKind::BufferMutation ? in.kind == InputKind::Buffer
                                                                 : in.kind == InputKind::UserInput);
      if (match) writable[g.inputs[i]] = g.outputs[o];
    }
  }
  compiled_ = compile(g, writable);
  pool_ = std::make_shared<StoragePool>();
  unplannable_reason_ = ExecutionPlan::unplannable_reason(*compiled_);
  // INGOT_EXECUTION_PLAN=0 runs every call through the interpreter (an A/B switch for
  // benchmarks, and a way out should a plan ever be suspected of a wrong answer).
  if (const char* env = std::getenv("INGOT_EXECUTION_PLAN")) planning_ = std::string(env) != "0";
  plannable_ = unplannable_reason_.empty();
}

ProgramModule::~ProgramModule() = default;
ProgramModule::ProgramModule(ProgramModule&&) noexcept = default;
ProgramModule& ProgramModule::operator=(ProgramModule&&) noexcept = default;

namespace {
// Plans kept per module: decode needs one, prefill one per prompt length seen recently.
constexpr size_t kMaxPlans = 4;
}  // namespace

int64_t ProgramModule::pooled_bytes() const {
  return pool_->pooled_bytes();
}
size_t ProgramModule::num_inplace_writes() const {
  return num_reinplaced(*compiled_);
}

const Tensor& ProgramModule::buffer(const std::string& name) const {
  auto it = buffers_.find(name);
  if (it != buffers_.end()) return it->second;
  auto st = program_->state.find(name);
  INGOT_CHECK(st != program_->state.end(), ValueError, "[ProgramModule] no buffer named '{}'",
              name);
  return st->second;
}

std::vector<Tensor> ProgramModule::check_call(const TreeSpec& spec,
                                              const std::vector<Leaf>& leaves) const {
  const TreeSpec& expected = program_->in_spec;
  std::vector<std::string> paths = expected.leaf_paths("", program_->input_names);
  // Structure first (ignoring static values), then static values.
  std::function<bool(const TreeSpec&, const TreeSpec&)> same_shape = [&](const TreeSpec& a,
                                                                         const TreeSpec& b) {
    if (a.type != b.type || a.keys != b.keys || a.children.size() != b.children.size())
      return false;
    for (size_t i = 0; i < a.children.size(); ++i) {
      if (!same_shape(a.children[i], b.children[i])) return false;
    }
    return true;
  };
  INGOT_CHECK(same_shape(spec, expected), ValueError,
              "[ProgramModule] the inputs have structure {}, the program was exported with {}",
              spec.str(), expected.str());
  std::vector<const TreeSpec*> want;
  std::function<void(const TreeSpec&)> collect = [&](const TreeSpec& s) {
    if (s.is_leaf()) want.push_back(&s);
    for (const TreeSpec& c : s.children) collect(c);
  };
  collect(expected);
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].is_tensor()) {
      tensors.push_back(leaves[i].tensor);
      continue;
    }
    INGOT_CHECK(leaves[i].value == want[i]->value, ValueError,
                "[ProgramModule] input '{}' was specialised to {} at export; got {} (export again "
                "with this value, or make it a tensor)",
                paths[i], static_value_str(want[i]->value), static_value_str(leaves[i].value));
  }
  return tensors;
}

std::vector<Tensor> ProgramModule::run(const std::vector<Tensor>& user_inputs) {
  const ExportedProgram& p = *program_;
  std::vector<Tensor> inputs;
  size_t next_user = 0;
  for (const InputSpec& in : p.signature.inputs) {
    switch (in.kind) {
      case InputKind::Parameter:
        inputs.push_back(p.state.at(in.target));
        break;
      case InputKind::Buffer:
        inputs.push_back(buffer(in.target));
        break;
      case InputKind::ConstantTensor:
        inputs.push_back(p.constants.at(in.target));
        break;
      case InputKind::UserInput:
        INGOT_CHECK(next_user < user_inputs.size(), ValueError,
                    "[ProgramModule] the program takes {} user inputs, got {}", p.num_user_inputs(),
                    user_inputs.size());
        inputs.push_back(user_inputs[next_user++]);
        break;
    }
  }
  INGOT_CHECK(next_user == user_inputs.size(), ValueError,
              "[ProgramModule] the program takes {} user inputs, got {}", p.num_user_inputs(),
              user_inputs.size());
  std::vector<Tensor> outputs;
  bool done = false;
  ExecutionPlan* plan = nullptr;
  if (planning_ && plannable_) {
    for (auto& candidate : plans_) {
      if (candidate->matches(inputs)) {
        plan = candidate.get();
        break;
      }
    }
    if (plan) done = plan->run(inputs, outputs);
    planned_runs_ += done;
  }
  if (!done) {
    sym::Bindings bindings = bind_inputs(p, inputs);
    if (planning_ && plannable_ && !plan) {
      if (plans_.size() >= kMaxPlans) plans_.erase(plans_.begin());
      plans_.push_back(std::make_unique<ExecutionPlan>(*compiled_, inputs, bindings, outputs));
    } else {
      outputs = run_graph(*compiled_, inputs, bindings, p.range_constraints, pool_.get());
    }
  }
  std::vector<Tensor> user_outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = p.signature.outputs[i];
    if (o.kind == OutputKind::UserOutput) {
      user_outputs.push_back(outputs[i]);
    } else if (o.kind == OutputKind::BufferMutation) {
      Tensor& b = buffers_.at(o.target);
      if (!outputs[i].is_same(b)) copy_(b, outputs[i]);
    } else {
      // The user input with this path: write the new value into the caller's tensor.
      size_t k = 0;
      for (const InputSpec& in : p.signature.inputs) {
        if (in.kind != InputKind::UserInput) continue;
        if (in.target == o.target) break;
        ++k;
      }
      const Tensor& target = user_inputs.at(k);
      if (!outputs[i].is_same(target)) copy_(target, outputs[i]);
    }
  }
  return user_outputs;
}

}  // namespace ingot::runtime
