#include "ingot/formats/pt2/aten_ops.h"

#include <functional>
#include <map>
#include <set>

#include "ingot/core/error.h"
#include "ingot/export/control_flow.h"
#include "ingot/ops/registry.h"

namespace ingot::pt2 {
namespace {

// --- small helpers over the registry ---------------------------------------------------

std::vector<Tensor> op(const char* name, std::vector<Value> values) {
  return call_op(OpRegistry::instance().get(name), std::move(values));
}
Tensor op1(const char* name, std::vector<Value> values) {
  return op(name, std::move(values)).at(0);
}

bool is_number(const Value& v) {
  return v.is(Value::Kind::Int) || v.is(Value::Kind::Float) || v.is(Value::Kind::Bool) ||
         v.is(Value::Kind::Scalar);
}

Scalar to_scalar(const Value& v) {
  if (v.is(Value::Kind::Scalar)) return v.scalar();
  if (v.is(Value::Kind::Float)) return Scalar(v.f64());
  if (v.is(Value::Kind::Bool)) return Scalar(v.boolean());
  return Scalar(v.sym_int().expect_int());
}

// Named access to one call's arguments, with errors naming the op.
class Args {
 public:
  Args(const OpName& op, const std::vector<NamedValue>& args) : op_(op), args_(args) {}

  const PValue* find(std::string_view name) const {
    for (const auto& a : args_) {
      if (a.name == name) return &a.value;
    }
    return nullptr;
  }
  // The argument by name, or by position among the positional ones.
  const Value& get(std::string_view name) const {
    const PValue* v = find(name);
    if (!v) fail(fmt::format("missing argument '{}'", name));
    return v->value;
  }
  Value get_or(std::string_view name, Value fallback) const {
    const PValue* v = find(name);
    return v && !v->value.is_none() ? v->value : fallback;
  }
  const Tensor& tensor(std::string_view name) const {
    const Value& v = get(name);
    if (!v.is(Value::Kind::Tensor)) fail(fmt::format("argument '{}' must be a tensor", name));
    return v.tensor();
  }
  std::optional<DType> dtype(std::string_view name) const {
    const PValue* v = find(name);
    if (!v || v->value.is_none()) return std::nullopt;
    if (!v->value.is(Value::Kind::DType)) fail(fmt::format("argument '{}' must be a dtype", name));
    return v->value.dtype();
  }
  bool flag(std::string_view name, bool fallback) const {
    const PValue* v = find(name);
    if (!v || v->value.is_none()) return fallback;
    if (!v->value.is(Value::Kind::Bool)) fail(fmt::format("argument '{}' must be a bool", name));
    return v->value.boolean();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(fmt::format("[pt2] {}: {}", op_.display, what));
  }
  const OpName& op() const { return op_; }
  const std::vector<NamedValue>& all() const { return args_; }

 private:
  const OpName& op_;
  const std::vector<NamedValue>& args_;
};

std::vector<PValue> one(Tensor t) {
  return {PValue{Value(std::move(t)), {}, {}}};
}

// An argument ingot's schema does not have: accepted when its value cannot change the
// result on ingot's CPU runtime.
bool benign_extra(const std::string& name, const PValue& v) {
  if (v.placement) {
    const std::string& p = *v.placement;
    return p == "cpu" || p == "strided" || p == "contiguous_format" || p == "preserve_format";
  }
  if (v.value.is_none()) return true;
  static const std::set<std::string> false_flags = {
      "pin_memory", "non_blocking", "requires_grad", "copy", "sparse", "scale_grad_by_freq"};
  return false_flags.count(name) && v.value.is(Value::Kind::Bool) && !v.value.boolean();
}

// Builds the registry call for an op that ingot defines under the same name.
std::vector<Value> bind(const OpDef& def, const Args& a) {
  const auto& params = def.schema.arguments;
  std::vector<Value> values;
  values.reserve(params.size());
  for (const auto& p : params) {
    const PValue* v = a.find(p.name);
    if (v && v->sym_bool)
      a.fail(fmt::format("argument '{}' is a SymBool, which {} does not take", p.name,
                         def.qualified_name));
    if (v && v->placement) {
      if (!benign_extra(p.name, *v))
        a.fail(fmt::format("argument '{}' = {} is not supported", p.name, *v->placement));
      values.push_back(Value());
      continue;
    }
    if (v) {
      values.push_back(v->value);
    } else if (p.default_value) {
      values.push_back(*p.default_value);
    } else if (p.type.optional) {
      values.push_back(Value());
    } else {
      a.fail(fmt::format("missing argument '{}' of {}", p.name, def.schema.str()));
    }
  }
  for (const auto& n : a.all()) {
    if (def.schema.argument_index(n.name) < 0 && !benign_extra(n.name, n.value)) {
      throw NotSupportedError(fmt::format(
          "[pt2] {}: argument '{}' = {} is not supported by ingot's {} ({})", a.op().display,
          n.name, n.value.placement ? *n.value.placement : n.value.value.str(), def.qualified_name,
          def.schema.str()));
    }
  }
  return values;
}

// A number where the schema wants a tensor: the `.Scalar` overload when ingot has one
// (add.Tensor(x, 1) -> add.Scalar), else a 0-d tensor holding it.
std::vector<PValue> call_registry(const OpDef& def, const Args& a) {
  std::vector<Value> values = bind(def, a);
  const auto& params = def.schema.arguments;
  bool numbers = false;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].type.base == BaseType::Tensor && !params[i].type.is_list && is_number(values[i]))
      numbers = true;
  }
  const OpDef* target = &def;
  if (numbers && def.schema.overload == "Tensor") {
    // Only when the .Scalar overload takes each number as a Scalar (sub.Tensor(5, x)
    // has no .Scalar form: 5 becomes a 0-d tensor below).
    const OpDef* s = OpRegistry::instance().find(def.schema.name + ".Scalar");
    for (size_t i = 0; s && i < params.size(); ++i) {
      if (params[i].type.base != BaseType::Tensor || params[i].type.is_list ||
          !is_number(values[i]))
        continue;
      if (i >= s->schema.arguments.size() || s->schema.arguments[i].type.base == BaseType::Tensor)
        s = nullptr;
    }
    if (s) {
      target = s;
      values = bind(*s, a);
    }
  }
  if (target == &def && numbers) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].type.base != BaseType::Tensor || params[i].type.is_list ||
          !is_number(values[i]))
        continue;
      const Scalar s = to_scalar(values[i]);
      values[i] = s.is_bool()       ? Tensor::scalar<bool>(s.to_int() != 0)
                  : s.is_integral() ? Tensor::scalar<int64_t>(s.to_int())
                                    : Tensor::scalar<float>(float(s.to_double()));
    }
  }
  std::vector<Tensor> out = call_op(*target, std::move(values));
  std::vector<PValue> result;
  if (!target->schema.returns.empty() && target->schema.returns[0].type.is_list) {
    result.push_back(PValue{Value(TensorList(out)), {}, {}});
  } else {
    for (Tensor& t : out) result.push_back(PValue{Value(std::move(t)), {}, {}});
  }
  return result;
}

// --- adapters: ATen ops written with registry ops --------------------------------------

using Adapter = std::function<std::vector<PValue>(const Args&)>;

Tensor to_dtype(const Tensor& self, std::optional<DType> dtype, bool copy) {
  if (!copy && (!dtype || *dtype == self.dtype())) return self;
  return op1("_to_copy", {self, dtype ? Value(*dtype) : Value()});
}

std::vector<PValue> adapter_to(const Args& a) {
  return one(to_dtype(a.tensor("self"), a.dtype("dtype"), a.flag("copy", false)));
}

Tensor full_of(const Shape& sizes, const Value& fill, DType dtype) {
  return op1("full", {SymIntList(sizes.begin(), sizes.end()), to_scalar(fill), dtype});
}

Tensor reduce_all(const char* op, const Tensor& x) {
  IntShape dims;
  for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  return op1(op, {x, dims, false});
}

SymIntList size_list(const Value& v) {
  if (v.is(Value::Kind::IntList)) return v.int_list();
  if (v.is(Value::Kind::Int)) return {v.sym_int()};
  throw ValueError("[pt2] expected a list of sizes");
}

// x[..., 1:] - x[..., :-1] along dim, n times, with prepend / append joined first.
std::vector<PValue> adapter_diff(const Args& a) {
  Tensor x = a.tensor("self");
  const int64_t n = a.get_or("n", Value(int64_t(1))).sym_int().expect_int();
  const int64_t dim = a.get_or("dim", Value(int64_t(-1))).sym_int().expect_int();
  const Value pre = a.get_or("prepend", Value()), app = a.get_or("append", Value());
  if (!pre.is_none() || !app.is_none()) {
    TensorList parts;
    if (!pre.is_none()) parts.push_back(pre.tensor());
    parts.push_back(x);
    if (!app.is_none()) parts.push_back(app.tensor());
    x = op1("cat", {parts, dim});
  }
  for (int64_t k = 0; k < n; ++k) {
    Tensor hi = op1("slice.Tensor", {x, dim, int64_t(1), Value(), int64_t(1)});
    Tensor lo = op1("slice.Tensor", {x, dim, int64_t(0), int64_t(-1), int64_t(1)});
    x = x.dtype() == DType::Bool ? op1("ne.Tensor", {hi, lo}) : op1("sub.Tensor", {hi, lo});
  }
  return one(x);
}

// self[indices]: integer index tensors (None keeps a dim). The indexed dims are
// flattened into one, indexed with one linear index, and the broadcast index shape put
// where ATen puts it (in place when the indexed dims are adjacent, else first).
std::vector<PValue> adapter_index(const Args& a) {
  Tensor self = a.tensor("self");
  const Value& iv = a.get("indices");
  if (!iv.is(Value::Kind::TensorList)) a.fail("indices must be a list of tensors");
  TensorList idx = iv.tensor_list();
  if (int64_t(idx.size()) > self.dim()) a.fail("too many indices");
  std::vector<int64_t> dims;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d].defined()) continue;
    const DType t = idx[d].dtype();
    if (t == DType::Bool || t == DType::U8)
      throw NotSupportedError(fmt::format(
          "[pt2] {}: a bool mask index (indices[{}]) has a data-dependent size; ingot maps "
          "index.Tensor with integer indices only",
          a.op().display, d));
    dims.push_back(int64_t(d));
  }
  if (dims.empty()) return one(self);
  bool adjacent = true;
  for (size_t k = 1; k < dims.size(); ++k) adjacent = adjacent && dims[k] == dims[k - 1] + 1;
  int64_t first = dims[0];
  if (!adjacent) {
    // Indexed dims first, the others after them in order.
    std::vector<int64_t> perm(dims);
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
    }
    self = op1("permute", {self, IntShape(perm)});
    TensorList moved;
    for (int64_t d : dims) moved.push_back(idx[size_t(d)]);
    idx = moved;
    for (size_t k = 0; k < dims.size(); ++k) dims[k] = int64_t(k);
    first = 0;
  }
  // Linear index over the indexed dims (negative indices wrapped).
  const Shape& sizes = self.sym_sizes();
  Tensor linear;
  SymInt block = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    const SymInt& size = sizes[size_t(dims[k])];
    Tensor i = idx[size_t(dims[k])];
    if (i.dtype() != DType::I64) i = op1("_to_copy", {i, DType::I64});
    Tensor wrapped =
        op1("where.self", {op1("lt.Scalar", {i, Scalar(int64_t(0))}),
                           op1("add.Scalar", {i, Value(size), Scalar(int64_t(1))}), i});
    Tensor term = block.maybe_int() == 1 ? wrapped : op1("mul.Scalar", {wrapped, Value(block)});
    linear = linear.defined() ? op1("add.Tensor", {term, linear}) : term;
    block = block * size;
  }
  const Shape bshape = linear.sym_sizes();
  SymIntList flat_sizes(sizes.begin(), sizes.begin() + first);
  flat_sizes.push_back(block);
  flat_sizes.insert(flat_sizes.end(), sizes.begin() + dims.back() + 1, sizes.end());
  Tensor flat = op1("reshape", {self, flat_sizes});
  Tensor picked =
      op1("index_select", {flat, first, op1("reshape", {linear, SymIntList{SymInt(-1)}})});
  SymIntList out_sizes(sizes.begin(), sizes.begin() + first);
  out_sizes.insert(out_sizes.end(), bshape.begin(), bshape.end());
  out_sizes.insert(out_sizes.end(), sizes.begin() + dims.back() + 1, sizes.end());
  return one(op1("reshape", {picked, out_sizes}));
}

std::vector<PValue> adapter_native_layer_norm(const Args& a) {
  const Tensor& x = a.tensor("input");
  const SymIntList shape = size_list(a.get("normalized_shape"));
  const Value w = a.get_or("weight", Value()), b = a.get_or("bias", Value());
  const double eps = a.get("eps").is(Value::Kind::Float)
                         ? a.get("eps").f64()
                         : double(a.get("eps").sym_int().expect_int());
  Tensor y = op1("layer_norm", {x, shape, w, b, eps, true});
  // mean and 1/std over the normalised dims (kept as size-1 dims), as ATen returns them.
  IntShape dims;
  for (size_t k = 0; k < shape.size(); ++k) dims.push_back(x.dim() - 1 - int64_t(k));
  Tensor xf = x.dtype() == DType::F32 ? x : op1("_to_copy", {x, DType::F32});
  Tensor mean = op1("mean.dim", {xf, dims, true});
  Tensor centered = op1("sub.Tensor", {xf, mean});
  Tensor var = op1("mean.dim", {op1("mul.Tensor", {centered, centered}), dims, true});
  Tensor rstd = op1("rsqrt", {op1("add.Scalar", {var, Scalar(eps)})});
  return {PValue{Value(y), {}, {}}, PValue{Value(mean), {}, {}}, PValue{Value(rstd), {}, {}}};
}

// The Python operators on tensors: the bitwise registry ops (logical on bool).
std::vector<PValue> adapter_bitwise(const Args& a, const char* op) {
  const Value& other = a.get("other");
  const std::string name =
      std::string("bitwise_") + op + (other.is(Value::Kind::Tensor) ? ".Tensor" : ".Scalar");
  return one(op1(name.c_str(), {a.tensor("self"), other}));
}

std::vector<PValue> adapter_any_dim(const Args& a) {
  const Tensor& x = a.tensor("self");
  const Value& d = a.get("dim");
  IntShape dims =
      d.is(Value::Kind::IntList) ? to_int_shape(d.int_list()) : IntShape{d.sym_int().expect_int()};
  const bool keepdim = a.flag("keepdim", false);
  Tensor nonzero = x.dtype() == DType::Bool ? x : op1("ne.Scalar", {x, Scalar(int64_t(0))});
  Tensor count = op1("sum.dim_IntList", {op1("_to_copy", {nonzero, DType::I64}), dims, keepdim});
  return one(op1("gt.Scalar", {count, Scalar(int64_t(0))}));
}

std::vector<PValue> adapter_new_filled(const Args& a, int64_t value) {
  const Tensor& self = a.tensor("self");
  const SymIntList sizes = size_list(a.get("size"));
  return one(full_of(Shape(sizes.begin(), sizes.end()), Value(value),
                     a.dtype("dtype").value_or(self.dtype())));
}

// floor_divide(self, other): div with floor rounding (a number as a 0-d tensor).
std::vector<PValue> adapter_floor_divide(const Args& a) {
  const Value& other = a.get("other");
  Tensor o;
  if (other.is(Value::Kind::Tensor)) {
    o = other.tensor();
  } else {
    const Scalar s = to_scalar(other);
    o = s.is_integral() || s.is_bool() ? Tensor::scalar<int64_t>(s.to_int())
                                       : Tensor::scalar<float>(float(s.to_double()));
  }
  return one(op1("div.Tensor_mode", {a.tensor("self"), o, std::string("floor")}));
}

// upsample_bilinear2d.vec with its output size (F.interpolate(size=...)); scale factors
// come as a float list, which the reader does not take (docs/pt2.md, Not covered).
std::vector<PValue> adapter_upsample_bilinear_vec(const Args& a) {
  const Value size = a.get_or("output_size", Value());
  if (size.is_none()) a.fail("needs output_size (scale_factors are not supported)");
  return one(op1("upsample_bilinear2d",
                 {a.tensor("input"), size_list(size), a.flag("align_corners", false)}));
}

// item() / _local_scalar_dense: an integer tensor's value as a SymInt (under export an
// unbacked symbol bound at run time), a bool tensor's as a SymBool. torch's SymFloat has
// no ingot counterpart.
std::vector<PValue> adapter_item(const Args& a) {
  const Tensor& t = a.tensor("self");
  if (t.dtype() == DType::Bool) return std::vector<PValue>{PValue{Value(false), item_bool(t), {}}};
  if (is_floating(t.dtype()))
    throw NotSupportedError(
        fmt::format("[pt2] {}: reading a {} tensor as a number (a SymFloat) is not supported by "
                    "ingot; only integer and bool tensors",
                    a.op().display, dtype_name(t.dtype())));
  return std::vector<PValue>{PValue{Value(item_int(t)), {}, {}}};
}

const std::map<std::string, Adapter, std::less<>>& adapters() {
  static const std::map<std::string, Adapter, std::less<>> table = {
      {"to.dtype", adapter_to},
      {"to.dtype_layout", adapter_to},
      {"to.device", adapter_to},
      {"alias", [](const Args& a) { return one(a.tensor("self")); }},
      {"lift_fresh_copy", [](const Args& a) { return one(op1("clone", {a.tensor("self")})); }},
      {"detach", [](const Args& a) { return one(a.tensor("self")); }},
      {"contiguous", [](const Args& a) { return one(op1("clone", {a.tensor("self")})); }},
      {"dropout",
       [](const Args& a) {
         if (a.flag("train", false) && a.get("p").f64() != 0.0)
           a.fail("dropout in training mode is random; export the model in eval mode");
         return one(a.tensor("input"));
       }},
      {"_assert_tensor_metadata", [](const Args&) { return std::vector<PValue>{}; }},
      {"diff", adapter_diff},
      {"index.Tensor", adapter_index},
      {"native_layer_norm", adapter_native_layer_norm},
      {"__and__.Tensor", [](const Args& a) { return adapter_bitwise(a, "and"); }},
      {"__or__.Tensor", [](const Args& a) { return adapter_bitwise(a, "or"); }},
      {"__xor__.Tensor", [](const Args& a) { return adapter_bitwise(a, "xor"); }},
      {"__and__.Scalar", [](const Args& a) { return adapter_bitwise(a, "and"); }},
      {"__or__.Scalar", [](const Args& a) { return adapter_bitwise(a, "or"); }},
      {"__xor__.Scalar", [](const Args& a) { return adapter_bitwise(a, "xor"); }},
      {"logical_and_",
       [](const Args& a) {
         return one(op1("logical_and", {a.tensor("self"), a.tensor("other")}));
       }},
      {"any.dim", adapter_any_dim},
      {"any.dims", adapter_any_dim},
      {"new_ones", [](const Args& a) { return adapter_new_filled(a, 1); }},
      {"new_zeros", [](const Args& a) { return adapter_new_filled(a, 0); }},
      {"full_like",
       [](const Args& a) {
         const Tensor& self = a.tensor("self");
         return one(full_of(self.sym_sizes(), a.get("fill_value"),
                            a.dtype("dtype").value_or(self.dtype())));
       }},
      {"zeros_like",
       [](const Args& a) {
         const Tensor& self = a.tensor("self");
         return one(
             full_of(self.sym_sizes(), Value(int64_t(0)), a.dtype("dtype").value_or(self.dtype())));
       }},
      {"ones_like",
       [](const Args& a) {
         const Tensor& self = a.tensor("self");
         return one(
             full_of(self.sym_sizes(), Value(int64_t(1)), a.dtype("dtype").value_or(self.dtype())));
       }},
      {"scalar_tensor",
       [](const Args& a) {
         return one(full_of({}, a.get("s"), a.dtype("dtype").value_or(DType::F32)));
       }},
      {"sym_size.int",
       [](const Args& a) {
         const Tensor& t = a.tensor("self");
         return std::vector<PValue>{
             PValue{Value(t.sym_size(t.wrap_dim(a.get("dim").sym_int().expect_int()))), {}, {}}};
       }},
      {"sym_numel",
       [](const Args& a) {
         return std::vector<PValue>{PValue{Value(a.tensor("self").sym_numel()), {}, {}}};
       }},
      {"_assert_scalar",
       [](const Args& a) {
         const PValue* v = a.find("self");
         if (!v) a.fail("missing argument 'self'");
         if (v->sym_bool)
           check(*v->sym_bool);
         else if (v->value.is(Value::Kind::Bool) && !v->value.boolean())
           a.fail("the assertion is false");
         return std::vector<PValue>{};
       }},
      {"_assert_async.msg", [](const Args&) { return std::vector<PValue>{}; }},
      {"_local_scalar_dense", adapter_item},
      // Uninitialised memory in torch: zeros here (every use overwrites it first).
      {"empty_like",
       [](const Args& a) {
         const Tensor& self = a.tensor("self");
         return one(
             full_of(self.sym_sizes(), Value(int64_t(0)), a.dtype("dtype").value_or(self.dtype())));
       }},
      // physical_layout orders the strides only; ingot's tensors are logically contiguous.
      {"empty_permuted",
       [](const Args& a) {
         const SymIntList& size = a.get("size").int_list();
         return one(full_of(Shape(size.begin(), size.end()), Value(int64_t(0)),
                            a.dtype("dtype").value_or(DType::F32)));
       }},
      {"upsample_bilinear2d.vec", adapter_upsample_bilinear_vec},
      {"upsample_nearest2d.vec",
       [](const Args& a) {
         const Value size = a.get_or("output_size", Value());
         if (size.is_none()) a.fail("needs output_size (scale_factors are not supported)");
         return one(op1("upsample_nearest2d", {a.tensor("input"), size_list(size)}));
       }},
      // Views of the training dialect: the registry's view ops.
      {"expand_as",
       [](const Args& a) {
         const Shape& s = a.tensor("other").sym_sizes();
         return one(op1("expand", {a.tensor("self"), SymIntList(s.begin(), s.end())}));
       }},
      {"flatten.using_ints",
       [](const Args& a) {
         const Tensor& x = a.tensor("self");
         if (x.dim() == 0) return one(op1("reshape", {x, SymIntList{SymInt(1)}}));
         const int64_t start =
             x.wrap_dim(a.get_or("start_dim", Value(int64_t(0))).sym_int().expect_int());
         const int64_t end =
             x.wrap_dim(a.get_or("end_dim", Value(int64_t(-1))).sym_int().expect_int());
         if (start > end) a.fail("start_dim must not come after end_dim");
         SymIntList sizes(x.sym_sizes().begin(), x.sym_sizes().begin() + start);
         SymInt merged = 1;
         for (int64_t d = start; d <= end; ++d) merged = merged * x.sym_size(d);
         sizes.push_back(merged);
         sizes.insert(sizes.end(), x.sym_sizes().begin() + end + 1, x.sym_sizes().end());
         return one(op1("reshape", {x, sizes}));
       }},
      {"floor_divide", adapter_floor_divide},
      {"floor_divide.Scalar", adapter_floor_divide},
      {"item", adapter_item},
      {"detach_", [](const Args& a) { return one(a.tensor("self")); }},
      {"type_as",
       [](const Args& a) {
         return one(to_dtype(a.tensor("self"), a.tensor("other").dtype(), false));
       }},
      {"reciprocal",
       [](const Args& a) {
         return one(op1("pow.Tensor_Scalar", {a.tensor("self"), Scalar(int64_t(-1))}));
       }},
      // max() / min() over every element: amax / amin over all dims.
      {"max", [](const Args& a) { return one(reduce_all("amax", a.tensor("self"))); }},
      {"min", [](const Args& a) { return one(reduce_all("amin", a.tensor("self"))); }},
      // where with a number for one side: that side as a 0-d tensor of the other's dtype.
      {"where.ScalarOther",
       [](const Args& a) {
         const Tensor& self = a.tensor("self");
         return one(op1("where.self",
                        {a.tensor("condition"), self, full_of({}, a.get("other"), self.dtype())}));
       }},
      {"where.ScalarSelf",
       [](const Args& a) {
         const Tensor& other = a.tensor("other");
         return one(op1("where.self",
                        {a.tensor("condition"), full_of({}, a.get("self"), other.dtype()), other}));
       }},
  };
  return table;
}

// Python's _operator functions on SymInts (torch records them for size arithmetic).
std::optional<PValue> call_operator(const std::string& fn, const Args& a) {
  auto num = [&](const char* n) -> SymInt {
    const Value& v = a.get(n);
    if (!v.is(Value::Kind::Int)) a.fail(fmt::format("operand '{}' must be an integer", n));
    return v.sym_int();
  };
  auto boolean = [&](const char* n) -> SymBool {
    const PValue* v = a.find(n);
    if (!v) a.fail(fmt::format("missing operand '{}'", n));
    if (v->sym_bool) return *v->sym_bool;
    if (v->value.is(Value::Kind::Bool)) return SymBool(v->value.boolean());
    a.fail(fmt::format("operand '{}' must be a bool", n));
  };
  auto i = [](SymInt v) { return PValue{Value(std::move(v)), {}, {}}; };
  auto b = [](SymBool v) { return PValue{Value(), std::move(v), {}}; };
  if (fn == "add") return i(num("a") + num("b"));
  if (fn == "sub") return i(num("a") - num("b"));
  if (fn == "mul") return i(num("a") * num("b"));
  if (fn == "floordiv") return i(floordiv(num("a"), num("b")));
  if (fn == "mod") return i(num("a") % num("b"));
  if (fn == "neg") return i(-num("a"));
  if (fn == "eq") return b(num("a") == num("b"));
  if (fn == "ne") return b(num("a") != num("b"));
  if (fn == "lt") return b(num("a") < num("b"));
  if (fn == "le") return b(num("a") <= num("b"));
  if (fn == "gt") return b(num("a") > num("b"));
  if (fn == "ge") return b(num("a") >= num("b"));
  if (fn == "and_") return b(boolean("a") && boolean("b"));
  if (fn == "or_") return b(boolean("a") || boolean("b"));
  if (fn == "not_") return b(!boolean("a"));
  return std::nullopt;
}

const std::set<std::string>& operator_names() {
  static const std::set<std::string> names = {"add", "sub", "mul",  "floordiv", "mod",
                                              "neg", "eq",  "ne",   "lt",       "le",
                                              "gt",  "ge",  "and_", "or_",      "not_"};
  return names;
}

}  // namespace

std::optional<OpName> parse_target(const std::string& target) {
  OpName n;
  static const std::string kOps = "torch.ops.";
  if (target.rfind("_operator.", 0) == 0) {
    n.display = target;
    n.registry = target.substr(10);
    n.is_operator = true;
    return n;
  }
  if (target.rfind(kOps, 0) != 0) return std::nullopt;
  // torch.ops.<namespace>.<op>.<overload>
  const std::string rest = target.substr(kOps.size());
  const size_t d1 = rest.find('.');
  if (d1 == std::string::npos) return std::nullopt;
  const std::string ns = rest.substr(0, d1);
  const std::string op_overload = rest.substr(d1 + 1);
  const size_t d2 = op_overload.rfind('.');
  std::string op = op_overload, overload;
  if (d2 != std::string::npos) {
    op = op_overload.substr(0, d2);
    overload = op_overload.substr(d2 + 1);
  }
  if (op.empty()) return std::nullopt;
  n.display = ns + "." + op_overload;
  const std::string base = overload.empty() || overload == "default" ? op : op + "." + overload;
  n.registry = ns == "aten" ? base : ns + "::" + base;
  return n;
}

bool is_supported(const OpName& op) {
  if (op.is_operator) return operator_names().count(op.registry) > 0;
  if (adapters().count(op.registry)) return true;
  const OpDef* def = OpRegistry::instance().find(op.registry);
  return def != nullptr;
}

std::vector<PValue> call_aten(const OpName& name, const std::vector<NamedValue>& args) {
  const Args a(name, args);
  if (name.is_operator) {
    if (auto r = call_operator(name.registry, a)) return {*r};
    throw NotSupportedError(
        fmt::format("[pt2] {}: this Python operator is not supported", name.display));
  }
  auto it = adapters().find(name.registry);
  if (it != adapters().end()) return it->second(a);
  const OpDef* def = OpRegistry::instance().find(name.registry);
  if (!def)
    throw NotSupportedError(fmt::format("[pt2] op {} is not in ingot's registry", name.display));
  return call_registry(*def, a);
}

}  // namespace ingot::pt2
