// The export tracer: records every op call made on traced tensors into a Graph, and
// functionalises in-place writes.
//
// A traced tensor is a data-less Tensor (dtype, symbolic sizes) whose annotation says
// which graph value it currently is. Tensors that alias (a buffer and a slice of it)
// share an AliasGroup: the group's base value plus, per tensor, the chain of view ops
// from the base. An in-place op (add_, copy_, index_copy_, index_put_) is recorded as its
// functional twin; the new value is scattered back into the base through the inverse of
// each view (slice -> slice_scatter, select -> select_scatter, reshape -> reshape back,
// ...), and every other view of that base is regenerated from the new base the next time
// it is read. At the end, a base that changed and is a buffer or user input becomes a
// mutation output of the program.
//
// Subgraphs (cond branches, map/while bodies) are traced in nested frames; a value from
// an outer frame used inside becomes an extra input of the subgraph ("captured").
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/export/control_flow.h"
#include "ingot/ir/graph.h"
#include "ingot/ir/program.h"
#include "ingot/ops/registry.h"
#include "ingot/sym/shape_env.h"

namespace ingot::ir {

struct AliasGroup;

// An input of the top-level graph: user input, parameter, buffer or lifted constant.
struct TracedInput {
  ValueId value;
  InputKind kind;
  std::string target;
  bool persistent = true;
  std::shared_ptr<AliasGroup> group;
  Tensor constant;  // lifted constants: the real tensor
};

class Tracer final : public OpInterceptor, public ShapeContext {
 public:
  Tracer(sym::ShapeEnv& env, std::shared_ptr<Graph> graph);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer active on this thread (inside Tracer::Active), or nullptr.
  static Tracer* current();
  // Activates the tracer on this thread for the scope's lifetime.
  class Active {
   public:
    explicit Active(Tracer& t);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    Tracer* previous_;
    InterceptorScope intercept_;
    LocationTracking tracking_;
  };

  // A new top-level graph input and the traced tensor that stands for it. An
  // uninitialised input (a parameter never loaded) errors when read.
  Tensor add_input(const std::string& name_hint, DType dtype, const Shape& sizes, InputKind kind,
                   const std::string& target, bool persistent = true, bool initialised = true);

  // The value a tensor stands for in the current frame: traced tensors resolve (views
  // regenerated when their base changed), real tensors are lifted as constants, values
  // of outer frames are captured.
  ValueId value_of(const Tensor& t);
  // A traced tensor for an existing value of the current frame.
  Tensor tensor_for(ValueId v);

  std::vector<Tensor> intercept(const OpArgs& args) override;
  SymInt new_dynamic_size() override;

  // Control flow and data dependence (control_flow.h / item.h call these when tracing).
  TensorList cond(const Tensor* pred_tensor, const SymBool* pred_sym, const GraphFn& true_fn,
                  const GraphFn& false_fn, const TensorList& operands,
                  const std::source_location& where);
  TensorList map(const GraphFn& f, const TensorList& xs, const TensorList& args,
                 const std::source_location& where);
  TensorList while_loop(const GraphFn& cond_fn, const GraphFn& body_fn, const TensorList& carried,
                        const TensorList& additional, const std::source_location& where);
  SymInt item(const Tensor& t, const std::source_location& where);
  void check(const SymBool& condition, const std::source_location& where);
  // Records an assert node as is (re-tracing an existing program).
  void add_assert(const sym::Expr& condition, const std::string& message, const SourceLine& src);
  // While set, recorded nodes carry this source line (re-tracing keeps the original
  // user lines).
  void set_source_override(std::optional<SourceLine> src) { source_override_ = std::move(src); }
  const std::optional<SourceLine>& source_override() const { return source_override_; }

  // After tracing.
  const std::vector<TracedInput>& inputs() const { return inputs_; }
  // The current value of an input whose tensor was written in place, or nullopt.
  std::optional<ValueId> mutated_value(const TracedInput& in) const;
  sym::ShapeEnv& env() { return env_; }

 private:
  struct Frame;
  std::vector<Tensor> record(const OpDef& op, const OpArgs& args, const SourceLine& src);
  std::vector<Tensor> record_values(const OpDef& op, std::vector<Value> values);
  std::vector<Tensor> functionalize(const OpArgs& args, const SourceLine& src);
  void write_back(const Tensor& target, const Tensor& new_value, const SourceLine& src,
                  const std::string& op_name);
  Tensor inverse_view(const struct ViewStep& step, const Tensor& base, const Tensor& new_view);
  ValueId resolve_in_own_frame(const Tensor& t);
  ValueId capture_into_current(size_t frame, ValueId v);
  Argument to_argument(const Value& v);
  Tensor make_traced(ValueId v, DType dtype, const Shape& sizes, std::shared_ptr<AliasGroup> group);
  size_t frame_of(const Graph* g) const;
  SourceLine call_site() const;
  // Traces fn in a new frame with placeholders like `inputs`; returns the subgraph.
  std::shared_ptr<Graph> trace_subgraph(const GraphFn& fn, const std::vector<ValueInfo>& inputs,
                                        const std::vector<std::string>& names,
                                        std::vector<std::pair<size_t, ValueId>>& captures,
                                        const char* what);
  void add_control_flow_node(Node node, std::vector<std::shared_ptr<Graph>> subgraphs,
                             std::vector<std::vector<std::pair<size_t, ValueId>>> captures);

  sym::ShapeEnv& env_;
  std::vector<std::unique_ptr<Frame>> frames_;
  size_t emit_frame_ = 0;  // the frame nodes are recorded into (the top one, except while
                           // regenerating a view of an outer frame)
  std::vector<TracedInput> inputs_;
  std::map<const TensorImpl*, size_t> lifted_constants_;  // real tensor -> inputs_ index
  std::optional<SourceLine> source_override_;
};

}  // namespace ingot::ir
