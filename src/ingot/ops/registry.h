// The op registry: each op is defined once and every layer reads that definition.
//
// An OpDef holds the op's ATen-style schema, a shape function written over SymInt
// (it must never read tensor data: export runs it on traced tensors), and how to run
// it on the CPU: a kernel writing into pre-allocated outputs, a view function returning
// aliases, or a decomposition into other ops. Ops register themselves at static-init
// time next to their definition:
//
//   static const OpRegistrar kAdd(
//       define_op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
//           .shape(binary_shape)
//           .cpu(add_kernel));
//
// Every call goes through call_op(), which checks the arguments against the schema,
// hands the call to the active OpInterceptor (the export tracer) if there is one, and
// otherwise runs the op eagerly.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/ops/schema.h"
#include "ingot/ops/value.h"

namespace ingot {

struct OpDef;

// dtype and (symbolic) sizes of one op output: what a shape function computes.
struct OutputMeta {
  DType dtype;
  Shape sizes;
};

// The normalised arguments of one call (defaults filled in, kinds checked), with typed
// accessors by position. Accessor errors name the op and the argument.
class OpArgs {
 public:
  OpArgs(const OpDef& op, std::vector<Value> values) : op_(&op), values_(std::move(values)) {}

  const OpDef& op() const { return *op_; }
  const std::string& name() const;
  size_t size() const { return values_.size(); }
  const Value& operator[](size_t i) const { return values_[i]; }
  const std::vector<Value>& values() const { return values_; }

  const Tensor& tensor(size_t i) const { return values_[i].tensor(); }
  // Undefined tensor when the argument is None.
  Tensor optional_tensor(size_t i) const;
  const TensorList& tensor_list(size_t i) const { return values_[i].tensor_list(); }
  const SymInt& sym_int(size_t i) const { return values_[i].sym_int(); }
  // Concrete int (kernels); throws if symbolic.
  int64_t int_(size_t i) const { return values_[i].sym_int().expect_int(); }
  std::optional<int64_t> optional_int(size_t i) const;
  const SymIntList& sym_int_list(size_t i) const { return values_[i].int_list(); }
  IntShape int_list(size_t i) const { return to_int_shape(values_[i].int_list()); }
  double f64(size_t i) const { return values_[i].f64(); }
  std::optional<double> optional_f64(size_t i) const;
  bool boolean(size_t i) const { return values_[i].boolean(); }
  const Scalar& scalar(size_t i) const { return values_[i].scalar(); }
  std::optional<Scalar> optional_scalar(size_t i) const;
  DType dtype(size_t i) const { return values_[i].dtype(); }
  std::optional<DType> optional_dtype(size_t i) const;
  const std::string& string(size_t i) const { return values_[i].string(); }

 private:
  const OpDef* op_;
  std::vector<Value> values_;
};

using ShapeFn = std::function<std::vector<OutputMeta>(const OpArgs&)>;
// Writes the op's results into `outputs`, allocated from the shape function's metas
// (or, for returns aliasing a mutated argument, that argument itself).
using CpuKernel = std::function<void(const OpArgs&, std::span<const Tensor> outputs)>;
// Returns the outputs of a view op: tensors sharing the input's storage.
using ViewFn = std::function<std::vector<Tensor>(const OpArgs&)>;
// Computes the op through other ops (via call_op), for ops without a kernel and for
// exporters that lack a translation.
using Decomposition = std::function<std::vector<Tensor>(const OpArgs&)>;
// Computes the op and allocates its outputs itself: for ops whose output sizes depend on
// data (nonzero) and for custom ops, whose shape function is only a fake for export.
using ComputeFn = std::function<std::vector<Tensor>(const OpArgs&)>;

struct OpDef {
  Schema schema;
  std::string qualified_name;  // "add.Tensor"
  ShapeFn shape_fn;
  CpuKernel cpu_kernel;
  ViewFn view_fn;
  Decomposition decomposition_fn;
  ComputeFn compute_fn;
  // Per return: index of the mutated argument it aliases, or -1 (derived from schema).
  std::vector<int> return_aliases;

  OpDef&& shape(ShapeFn f) && {
    shape_fn = std::move(f);
    return std::move(*this);
  }
  OpDef&& cpu(CpuKernel k) && {
    cpu_kernel = std::move(k);
    return std::move(*this);
  }
  OpDef&& view(ViewFn f) && {
    view_fn = std::move(f);
    return std::move(*this);
  }
  OpDef&& decompose(Decomposition f) && {
    decomposition_fn = std::move(f);
    return std::move(*this);
  }
  OpDef&& compute(ComputeFn f) && {
    compute_fn = std::move(f);
    return std::move(*this);
  }

  bool is_view() const { return schema.is_view(); }
  bool is_inplace() const { return !schema.mutated_arguments().empty(); }
};

// Starts an op definition from its schema text (throws ValueError if malformed).
OpDef define_op(std::string_view schema);

class OpRegistry {
 public:
  static OpRegistry& instance();
  // Throws InternalError on a duplicate name or an incomplete definition.
  void add(OpDef def);
  // Throws NotSupportedError naming the op when it is not registered.
  const OpDef& get(std::string_view qualified_name) const;
  const OpDef* find(std::string_view qualified_name) const;
  const std::map<std::string, OpDef, std::less<>>& all() const { return ops_; }

 private:
  std::map<std::string, OpDef, std::less<>> ops_;
};

struct OpRegistrar {
  explicit OpRegistrar(OpDef def) { OpRegistry::instance().add(std::move(def)); }
};

// Receives every op call while installed (the export tracer). It may run the op
// eagerly itself with eager_call().
class OpInterceptor {
 public:
  virtual ~OpInterceptor() = default;
  virtual std::vector<Tensor> intercept(const OpArgs& args) = 0;
};

// Installs an interceptor on this thread for the scope's lifetime (restoring the
// previous one on exit, also when unwinding).
class InterceptorScope {
 public:
  explicit InterceptorScope(OpInterceptor* interceptor);
  ~InterceptorScope();
  InterceptorScope(const InterceptorScope&) = delete;
  InterceptorScope& operator=(const InterceptorScope&) = delete;

 private:
  OpInterceptor* previous_;
};
OpInterceptor* current_interceptor();

// The user's source line of the op call being made: set by the outermost functional API
// call on this thread (calls made from inside an op's implementation keep the outer
// line), so a traced node records the line in the model that asked for it.
class CallSiteScope {
 public:
  explicit CallSiteScope(const std::source_location& where);
  ~CallSiteScope();
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;

 private:
  bool outermost_;
};
// The active call site, or nullptr outside any functional API call.
const std::source_location* current_call_site();

// What shape functions may ask of the tracer running them (torch.library's get_ctx()):
// a fresh data-dependent size for outputs whose size depends on data.
class ShapeContext {
 public:
  virtual ~ShapeContext() = default;
  virtual SymInt new_dynamic_size() = 0;
};
class ShapeContextScope {
 public:
  explicit ShapeContextScope(ShapeContext* context);
  ~ShapeContextScope();
  ShapeContextScope(const ShapeContextScope&) = delete;
  ShapeContextScope& operator=(const ShapeContextScope&) = delete;

 private:
  ShapeContext* previous_;
};
// A new unbacked size symbol (range [0, inf)) from the tracer running this shape
// function. Throws NotSupportedError outside a traced shape function (eager kernels
// know their sizes).
SymInt new_dynamic_size();

// Checks `values` against the op's schema: fills defaults for missing trailing
// arguments and converts numbers to the schema's kind (int -> float, number -> Scalar,
// single int -> `int[N]`). Throws ValueError naming the op and the argument.
OpArgs normalize_args(const OpDef& op, std::vector<Value> values);

// The entry point for every op call: normalise, intercept or run eagerly.
std::vector<Tensor> call_op(const OpDef& op, std::vector<Value> values);
// Allocates one kernel output (the runtime's memory pool); default Tensor::empty.
using OutputAllocator = std::function<Tensor(const IntShape& sizes, DType dtype)>;
// Runs the op on real tensors: view function, kernel, or decomposition. Kernel outputs
// come from `allocate` when given.
std::vector<Tensor> eager_call(const OpArgs& args, const OutputAllocator* allocate = nullptr);

// Looks an op up once and calls it; the handle makes repeated calls lookup-free:
//   static const OpHandle kAdd("add.Tensor");  return kAdd({a, b, alpha})[0];
class OpHandle {
 public:
  explicit OpHandle(std::string_view qualified_name) : name_(qualified_name) {}
  const OpDef& def() const;
  std::vector<Tensor> operator()(std::vector<Value> values) const {
    return call_op(def(), std::move(values));
  }

 private:
  std::string name_;
  mutable const OpDef* def_ = nullptr;
};

}  // namespace ingot
