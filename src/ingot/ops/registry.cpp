#include "ingot/ops/registry.h"

namespace ingot {
namespace {

thread_local OpInterceptor* t_interceptor = nullptr;

bool is_number(const Value& v) {
  return v.is(Value::Kind::Int) || v.is(Value::Kind::Float) || v.is(Value::Kind::Bool) ||
         v.is(Value::Kind::Scalar);
}

Scalar to_scalar(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Int: return Scalar(v.sym_int().expect_int());
    case Value::Kind::Float: return Scalar(v.f64());
    case Value::Kind::Bool: return Scalar(v.boolean());
    default: return v.scalar();
  }
}

// Converts v to the kind `arg` declares, or returns nullopt when it cannot.
std::optional<Value> coerce(const Argument& arg, Value v) {
  const ArgType& t = arg.type;
  if (v.is_none()) {
    if (t.optional) return v;
    if (t.base == BaseType::Tensor && !t.is_list) return std::nullopt;
    return std::nullopt;
  }
  if (t.is_list) {
    if (t.base == BaseType::Tensor) {
      if (v.is(Value::Kind::TensorList)) {
        if (!t.elements_optional) {
          for (const auto& e : v.tensor_list()) {
            if (!e.defined()) return std::nullopt;
          }
        }
        return v;
      }
      return std::nullopt;
    }
    if (t.base == BaseType::Int || t.base == BaseType::SymInt) {
      if (v.is(Value::Kind::IntList)) return v;
      if (v.is(Value::Kind::Int) && t.fixed_size > 0) {
        return Value(SymIntList(size_t(t.fixed_size), v.sym_int()));
      }
    }
    return std::nullopt;
  }
  switch (t.base) {
    case BaseType::Tensor:
      if (v.is(Value::Kind::Tensor) && (v.tensor().defined() || t.optional)) return v;
      return std::nullopt;
    case BaseType::Int:
    case BaseType::SymInt:
      if (v.is(Value::Kind::Int)) return v;
      if (v.is(Value::Kind::Scalar) && v.scalar().is_integral()) return Value(v.scalar().to_int());
      return std::nullopt;
    case BaseType::Float:
      if (v.is(Value::Kind::Float)) return v;
      if (v.is(Value::Kind::Int)) return Value(double(v.sym_int().expect_int()));
      if (v.is(Value::Kind::Scalar) && !v.scalar().is_bool()) return Value(v.scalar().to_double());
      return std::nullopt;
    case BaseType::Bool:
      if (v.is(Value::Kind::Bool)) return v;
      return std::nullopt;
    case BaseType::Scalar:
      // A symbolic int stays a SymInt (torch passes SymInts where ATen says Scalar, e.g.
      // arange(s0)); the op's shape function must accept it (arange does).
      if (v.is(Value::Kind::Int) && v.sym_int().is_symbolic()) return v;
      if (is_number(v)) return Value(to_scalar(v));
      return std::nullopt;
    case BaseType::ScalarType:
      if (v.is(Value::Kind::DType)) return v;
      return std::nullopt;
    case BaseType::Str:
      if (v.is(Value::Kind::String)) return v;
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

const std::string& OpArgs::name() const { return op_->qualified_name; }

Tensor OpArgs::optional_tensor(size_t i) const {
  return values_[i].is_none() ? Tensor() : values_[i].tensor();
}
std::optional<int64_t> OpArgs::optional_int(size_t i) const {
  if (values_[i].is_none()) return std::nullopt;
  return values_[i].sym_int().expect_int();
}
std::optional<double> OpArgs::optional_f64(size_t i) const {
  if (values_[i].is_none()) return std::nullopt;
  return values_[i].f64();
}
std::optional<Scalar> OpArgs::optional_scalar(size_t i) const {
  if (values_[i].is_none()) return std::nullopt;
  return values_[i].scalar();
}
std::optional<DType> OpArgs::optional_dtype(size_t i) const {
  if (values_[i].is_none()) return std::nullopt;
  return values_[i].dtype();
}

OpDef define_op(std::string_view schema_text) {
  OpDef def;
  def.schema = parse_schema(schema_text);
  def.qualified_name = def.schema.qualified_name();
  def.return_aliases = def.schema.returns_aliasing_mutated_args();
  return def;
}

OpRegistry& OpRegistry::instance() {
  static OpRegistry registry;
  return registry;
}

void OpRegistry::add(OpDef def) {
  const std::string name = def.qualified_name;
  INGOT_CHECK(!ops_.contains(name), InternalError, "[OpRegistry] op '{}' registered twice", name);
  // A custom op may come without a shape function (no fake impl): it runs eagerly and
  // export names it as the op that cannot be traced.
  INGOT_CHECK(def.shape_fn || def.view_fn || def.compute_fn, InternalError,
              "[OpRegistry] op '{}' has neither a shape function nor a view function", name);
  INGOT_CHECK(def.cpu_kernel || def.view_fn || def.decomposition_fn || def.compute_fn, InternalError,
              "[OpRegistry] op '{}' has no CPU kernel, view function or decomposition", name);
  INGOT_CHECK(!def.view_fn || def.shape_fn, InternalError,
              "[OpRegistry] view op '{}' needs a shape function too (export uses it)", name);
  ops_.emplace(name, std::move(def));
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

const OpDef& OpRegistry::get(std::string_view name) const {
  const OpDef* def = find(name);
  INGOT_CHECK(def != nullptr, NotSupportedError,
              "[ops] no op named '{}' is registered ({} ops are; see ingot/ops/functional.h)",
              name, ops_.size());
  return *def;
}

const OpDef& OpHandle::def() const {
  if (!def_) def_ = &OpRegistry::instance().get(name_);
  return *def_;
}

InterceptorScope::InterceptorScope(OpInterceptor* interceptor) : previous_(t_interceptor) {
  t_interceptor = interceptor;
}
InterceptorScope::~InterceptorScope() { t_interceptor = previous_; }
OpInterceptor* current_interceptor() { return t_interceptor; }

namespace {
thread_local const std::source_location* t_call_site = nullptr;
thread_local std::source_location t_call_site_storage;
thread_local ShapeContext* t_shape_context = nullptr;
}  // namespace

CallSiteScope::CallSiteScope(const std::source_location& where) : outermost_(t_call_site == nullptr) {
  if (outermost_) {
    t_call_site_storage = where;
    t_call_site = &t_call_site_storage;
  }
}
CallSiteScope::~CallSiteScope() {
  if (outermost_) t_call_site = nullptr;
}
const std::source_location* current_call_site() { return t_call_site; }

ShapeContextScope::ShapeContextScope(ShapeContext* context) : previous_(t_shape_context) {
  t_shape_context = context;
}
ShapeContextScope::~ShapeContextScope() { t_shape_context = previous_; }

SymInt new_dynamic_size() {
  INGOT_CHECK(t_shape_context != nullptr, NotSupportedError,
              "[new_dynamic_size] only available inside a shape (fake) function run by the "
              "export tracer");
  return t_shape_context->new_dynamic_size();
}

OpArgs normalize_args(const OpDef& op, std::vector<Value> values) {
  const auto& params = op.schema.arguments;
  INGOT_CHECK(values.size() <= params.size(), ValueError,
              "[{}] takes {} arguments but {} were given; schema: {}", op.qualified_name,
              params.size(), values.size(), op.schema.str());
  values.reserve(params.size());
  for (size_t i = values.size(); i < params.size(); ++i) {
    INGOT_CHECK(params[i].default_value.has_value(), ValueError,
                "[{}] missing required argument '{}'; schema: {}", op.qualified_name,
                params[i].name, op.schema.str());
    values.push_back(*params[i].default_value);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<Value> v = coerce(params[i], values[i]);
    INGOT_CHECK(v.has_value(), ValueError, "[{}] argument '{}' expects {}, got {}",
                op.qualified_name, params[i].name, params[i].type.str(), values[i].str());
    values[i] = std::move(*v);
  }
  return OpArgs(op, std::move(values));
}

std::vector<Tensor> eager_call(const OpArgs& args, const OutputAllocator* allocate) {
  const OpDef& op = args.op();
  if (op.view_fn) return op.view_fn(args);
  if (op.compute_fn) return op.compute_fn(args);
  if (!op.cpu_kernel) {
    // A composite: its shape function checks the arguments (the error names this op, not
    // an op of its decomposition), as it does when the call is traced.
    op.shape_fn(args);
    return op.decomposition_fn(args);
  }
  std::vector<OutputMeta> metas = op.shape_fn(args);
  INGOT_CHECK(metas.size() == op.return_aliases.size() || op.schema.returns.at(0).type.is_list,
              InternalError, "[{}] shape function returned {} outputs, schema has {}",
              op.qualified_name, metas.size(), op.return_aliases.size());
  std::vector<Tensor> outputs;
  outputs.reserve(metas.size());
  for (size_t i = 0; i < metas.size(); ++i) {
    int alias = i < op.return_aliases.size() ? op.return_aliases[i] : -1;
    if (alias >= 0) {
      const Tensor& target = args.tensor(size_t(alias));
      target.check_writable(op.qualified_name.c_str());
      outputs.push_back(target);
    } else {
      IntShape sizes = to_int_shape(metas[i].sizes);
      outputs.push_back(allocate ? (*allocate)(sizes, metas[i].dtype) : Tensor::empty(sizes, metas[i].dtype));
    }
  }
  op.cpu_kernel(args, outputs);
  return outputs;
}

std::vector<Tensor> call_op(const OpDef& op, std::vector<Value> values) {
  OpArgs args = normalize_args(op, std::move(values));
  if (OpInterceptor* interceptor = t_interceptor) return interceptor->intercept(args);
  return eager_call(args);
}

}  // namespace ingot
