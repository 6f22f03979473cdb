// ExecutionPlan: one graph resolved for one input signature (DESIGN decision 12).
//
// Built by running the graph once: every node's kernel, normalised argument list,
// output shapes and output buffers are fixed then; views (reshape, slice, transpose, ...)
// are computed once and never re-run; asserts are checked once (they depend on input
// sizes only). A later run with the same signature only calls the kernels in order:
// no shape function, no argument building, no registry or map lookup, and no Storage
// allocation.
//
// Signature: per graph input its dtype, sizes and strides. Inputs that a view reads,
// that are written in place, that sit in a tensor list or that are graph outputs are
// "bound": the plan's views and in-place writes point at their storage, so the plan only
// matches the very same tensor (impl identity). The others (token ids, weights read by
// kernels) are rebound in each step's argument list.
//
// Memory: intermediates live in storages the plan owns, placed by lifetime (a storage is
// reused once every value in it is dead, in node order, so the placement is valid for
// every run). Outputs placed there are overwritten by the next run: run() refuses
// (returns false, the caller runs the unplanned path) while the caller still holds a
// previous output or a view of it.
//
// item() is planned only where its symbol feeds nothing but asserts (the StaticCache room
// check: cache_position + tokens <= max_cache_len): those run on every call, in node
// order, before the cache write. Graphs with control flow, other item() uses,
// data-dependent outputs (compute ops) or ops that only decompose are not plannable
// (unplannable_reason() says which node) and keep the interpreter.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/ops/registry.h"
#include "ingot/runtime/executor/compiled_graph.h"
#include "ingot/sym/shape_env.h"

namespace ingot::runtime {

class ExecutionPlan {
 public:
  // Why `graph` cannot be planned (the first node that stops it), or "" when it can.
  static std::string unplannable_reason(const CompiledGraph& graph);

  // Plans `graph` for `inputs` (graph.inputs order; `bindings` from bind_inputs, already
  // checked) and runs it once: `outputs` receives the graph outputs.
  ExecutionPlan(const CompiledGraph& graph, const std::vector<Tensor>& inputs,
                const sym::Bindings& bindings, std::vector<Tensor>& outputs);

  // Same signature as the inputs the plan was built for.
  bool matches(const std::vector<Tensor>& inputs) const;
  // Runs the kernels on `inputs` (matches() must hold). False, with nothing run, when the
  // caller still holds an output of the previous run that this run would overwrite.
  bool run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

  size_t num_kernels() const { return num_kernels_; }
  int64_t owned_bytes() const;

 private:
  // A kernel call, or (kernel null) a data check: item() of `source` into `slot` (the
  // cache position of a StaticCache), or an assert over such a symbol (`check`).
  struct Step {
    const CpuKernel* kernel = nullptr;
    std::optional<OpArgs> args;
    std::vector<Tensor> outputs;
    Tensor source;
    int64_t* slot = nullptr;
    const ir::Node* check = nullptr;
    const OpDef* view_op = nullptr;  // a view op that copied: re-run, copied into outputs[0]
    std::string label;               // for INGOT_OP_PROFILE: "op [out sizes] <- [in sizes]"
  };
  // Argument `arg` of step `step` is graph input `input` (rebound every run).
  struct Rebind {
    size_t step, arg, input;
  };
  // Per input: bound to the impl, or just its geometry.
  struct InputKey {
    bool bound;
    Tensor tensor;  // the tensor planned with (kept alive: bound identity stays unique)
    DType dtype;
    IntShape sizes, strides;
  };
  // A graph output placed in plan-owned memory: handed out through `handle` so the plan
  // sees (by use counts) whether the caller still holds it.
  struct OwnedOutput {
    size_t index;
    std::shared_ptr<TensorImpl> handle;
    long storage_uses;  // use count of its storage when the caller holds nothing
  };

  void run_check(const Step& s) const;
  void run_profiled();
  static Step recompute_step(const OpDef& op, OpArgs args, const Tensor& buffer);
  static void run_recompute(const Step& s);

  std::vector<Step> steps_;
  size_t num_kernels_ = 0;
  sym::Bindings bindings_;  // input sizes and the data symbols the checks read
  std::vector<Rebind> rebinds_;
  std::vector<InputKey> keys_;
  std::vector<Tensor> outputs_;  // what run() returns (owned ones through their handle)
  std::vector<OwnedOutput> owned_outputs_;
  std::vector<std::shared_ptr<Storage>> storages_;
};

}  // namespace ingot::runtime
