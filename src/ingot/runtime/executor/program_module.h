// ProgramModule: an ExportedProgram made callable (torch.export's `ep.module()`), with
// its own copy of the mutable state: buffers updated by one call are seen by the next,
// mutated user inputs (a StaticCache) are written in place in the caller's tensors.
//
//   runtime::ProgramModule mod(program);
//   std::vector<Tensor> out = mod(input_ids, cache);   // flattened like export did
//
// The graph is compiled once (kernels resolved, value lifetimes, in-place writes). A
// plannable graph then runs through an ExecutionPlan per input signature (cached, a few
// at a time): a call with the shapes of an earlier one only runs kernels. Outputs of a
// planned run live in the plan's memory until the next call with that signature (a
// call made while the caller still holds them takes the unplanned path instead, which
// is correct but allocates). Other graphs run in the interpreter, their intermediate
// memory from a pool kept across calls.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/ir/program.h"
#include "ingot/ir/pytree.h"

namespace ingot::runtime {

struct CompiledGraph;
class ExecutionPlan;
class StoragePool;

class ProgramModule {
 public:
  explicit ProgramModule(std::shared_ptr<const ExportedProgram> program);
  // Runs a copy of `program` (the copy shares its graph and weights).
  explicit ProgramModule(const ExportedProgram& program);
  ~ProgramModule();
  ProgramModule(ProgramModule&&) noexcept;
  ProgramModule& operator=(ProgramModule&&) noexcept;
  // Bytes of intermediate memory the module keeps for reuse.
  int64_t pooled_bytes() const;
  // Nodes that write a buffer or user input in place instead of producing a copy.
  size_t num_inplace_writes() const;

  // Execution plans on (default; off when the environment sets INGOT_EXECUTION_PLAN=0) or
  // off (every call through the interpreter, for tests and benchmarks comparing the two).
  void set_planning(bool enabled) { planning_ = enabled; }
  // Plans made so far (cached ones; 0 when the graph is not plannable).
  size_t num_plans() const { return plans_.size(); }
  bool plannable() const { return unplannable_reason_.empty(); }
  // What keeps the graph from being planned ("" when it is plannable).
  const std::string& unplannable_reason() const { return unplannable_reason_; }
  // Calls that only ran a cached plan's kernels (not the interpreter, not a plan build).
  int64_t num_planned_runs() const { return planned_runs_; }

  // Flat user tensors in in_spec order -> flat user outputs. Mutated user inputs are
  // updated in place; mutated buffers persist in this module.
  std::vector<Tensor> run(const std::vector<Tensor>& user_inputs);

  // Typed call: flattens args like export did (static leaves must equal the exported
  // values) and returns the flat user outputs.
  template <typename... Args>
  std::vector<Tensor> operator()(const Args&... args) {
    std::vector<Leaf> leaves;
    TreeSpec spec = tree_flatten(std::tuple<Args...>(args...), leaves);
    return run(check_call(spec, leaves));
  }

  const ExportedProgram& program() const { return *program_; }
  // The current value of a buffer (after mutations).
  const Tensor& buffer(const std::string& name) const;

 private:
  std::vector<Tensor> check_call(const TreeSpec& spec, const std::vector<Leaf>& leaves) const;
  std::shared_ptr<const ExportedProgram> program_;
  std::map<std::string, Tensor> buffers_;  // owned, writable copies of mutated buffers
  // Compiled once: mutated buffers and user inputs are written in place.
  std::shared_ptr<const CompiledGraph> compiled_;
  std::shared_ptr<StoragePool> pool_;  // intermediate memory, reused across runs
  bool planning_ = true;
  bool plannable_ = false;
  std::string unplannable_reason_;
  int64_t planned_runs_ = 0;
  std::vector<std::unique_ptr<ExecutionPlan>> plans_;  // most recently made last
};

}  // namespace ingot::runtime
