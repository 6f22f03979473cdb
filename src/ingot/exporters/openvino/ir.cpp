#include "ingot/exporters/openvino/ir.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

std::string_view element_type_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "boolean";
    case DType::U8:
      return "u8";
    case DType::I8:
      return "i8";
    case DType::I16:
      return "i16";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
  }
  return "undefined";
}

std::string_view precision_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "BOOL";
    case DType::U8:
      return "U8";
    case DType::I8:
      return "I8";
    case DType::I16:
      return "I16";
    case DType::I32:
      return "I32";
    case DType::I64:
      return "I64";
    case DType::F16:
      return "FP16";
    case DType::BF16:
      return "BF16";
    case DType::F32:
      return "FP32";
    case DType::F64:
      return "FP64";
  }
  return "UNSPECIFIED";
}

DType dtype_of_element_type(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (element_type_name(DType(i)) == name) return DType(i);
  }
  INGOT_THROW(ValueError, "[openvino] element type '{}' has no ingot dtype", name);
}

std::string_view op_version(std::string_view type) {
  // The newest version of each op in openvino 2026.4 (tools/openvino/requirements.txt),
  // as its opset modules define them (openvino.opset16 re-exports the newest of each).
  static const std::map<std::string, std::string, std::less<>> versions = {
      {"Parameter", "opset1"},
      {"Const", "opset1"},
      {"Result", "opset1"},
      {"Add", "opset1"},
      {"Subtract", "opset1"},
      {"Multiply", "opset1"},
      {"Divide", "opset1"},
      {"Power", "opset1"},
      {"Negative", "opset1"},
      {"Abs", "opset1"},
      {"Cos", "opset1"},
      {"Sin", "opset1"},
      {"Exp", "opset1"},
      {"Log", "opset1"},
      {"Sqrt", "opset1"},
      {"Tanh", "opset1"},
      {"Sigmoid", "opset1"},
      {"Relu", "opset1"},
      {"Swish", "opset4"},
      {"Erf", "opset1"},
      {"Floor", "opset1"},
      {"Sign", "opset1"},
      {"FloorMod", "opset1"},
      {"Mod", "opset1"},
      {"Maximum", "opset1"},
      {"Minimum", "opset1"},
      {"Equal", "opset1"},
      {"NotEqual", "opset1"},
      {"Less", "opset1"},
      {"LessEqual", "opset1"},
      {"Greater", "opset1"},
      {"GreaterEqual", "opset1"},
      {"LogicalAnd", "opset1"},
      {"LogicalOr", "opset1"},
      {"LogicalNot", "opset1"},
      {"Select", "opset1"},
      {"Convert", "opset1"},
      {"MatMul", "opset1"},
      {"Gather", "opset8"},
      {"GatherElements", "opset6"},
      {"ScatterElementsUpdate", "opset12"},
      {"NonZero", "opset3"},
      {"TopK", "opset11"},
      {"ReduceSum", "opset1"},
      {"ReduceMean", "opset1"},
      {"ReduceMax", "opset1"},
      {"ReduceMin", "opset1"},
      {"CumSum", "opset3"},
      {"SoftMax", "opset8"},
      {"LogSoftmax", "opset5"},
      {"Reshape", "opset1"},
      {"Transpose", "opset1"},
      {"Squeeze", "opset15"},
      {"Unsqueeze", "opset1"},
      {"Concat", "opset1"},
      {"VariadicSplit", "opset1"},
      {"Slice", "opset8"},
      {"Broadcast", "opset3"},
      {"ShapeOf", "opset3"},
      {"Range", "opset4"},
      {"Tile", "opset1"},
      {"If", "opset8"},
      {"Loop", "opset5"},
      {"ReadValue", "opset6"},
      {"Assign", "opset6"},
      {"Identity", "opset16"},
      {"MVN", "opset6"},
      {"Gelu", "opset7"},
      {"IsNaN", "opset10"},
      {"IsInf", "opset10"},
      {"Tan", "opset1"},
      {"Asin", "opset1"},
      {"Acos", "opset1"},
      {"Atan", "opset1"},
      {"Sinh", "opset1"},
      {"Cosh", "opset1"},
      {"Asinh", "opset4"},
      {"Acosh", "opset4"},
      {"Atanh", "opset4"},
      {"Ceiling", "opset1"},
      {"Round", "opset5"},
  };
  auto it = versions.find(type);
  INGOT_CHECK(it != versions.end(), InternalError,
              "[openvino] op type '{}' is not in the opset version table (openvino/ir.cpp)", type);
  return it->second;
}

namespace {

std::string attr_value(const Attributes& attrs, std::string_view key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return v;
  }
  return "";
}

bool is_comparison(std::string_view t) {
  return t == "Equal" || t == "NotEqual" || t == "Less" || t == "LessEqual" || t == "Greater" ||
         t == "GreaterEqual" || t == "LogicalAnd" || t == "LogicalOr" || t == "LogicalNot";
}

}  // namespace

std::string Graph::fresh_name(std::string_view hint) {
  auto it = name_counts_.find(hint);
  if (it == name_counts_.end()) {
    name_counts_.emplace(std::string(hint), 1);
    return std::string(hint);
  }
  return fmt::format("{}_{}", hint, it->second++);
}

int32_t Graph::append(Layer l) {
  for (const Value& v : l.inputs) {
    INGOT_CHECK(v.valid() && size_t(v.layer) < layers_.size() &&
                    size_t(v.port) < layers_[size_t(v.layer)].outputs.size(),
                InternalError, "[openvino] layer '{}' ({}) reads a value that is not in its graph",
                l.name, l.type);
  }
  if (l.version.empty()) l.version = std::string(op_version(l.type));
  layers_.push_back(std::move(l));
  return int32_t(layers_.size() - 1);
}

Value Graph::parameter(const std::string& name, DType type, const std::vector<int64_t>& dims,
                       std::string shape) {
  if (shape.empty()) {
    std::vector<std::string> parts;
    for (int64_t d : dims) parts.push_back(d < 0 ? "?" : std::to_string(d));
    shape = fmt::format("{}", fmt::join(parts, ","));
  }
  Layer l;
  l.name = fresh_name(name);
  l.type = "Parameter";
  l.attrs = {{"shape", shape}, {"element_type", std::string(element_type_name(type))}};
  l.outputs.push_back(PortInfo{type, dims, {name}});
  int32_t id = append(std::move(l));
  parameters_.push_back(id);
  return {id, 0};
}

Value Graph::constant(const Tensor& t, std::string_view hint) {
  Tensor c = t.is_contiguous() ? t : contiguous(t);
  const std::vector<int64_t> dims = c.sizes();
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(std::to_string(d));
  Layer l;
  l.name = fresh_name(hint);
  l.type = "Const";
  // offset / size are filled in by the writer.
  l.attrs = {{"element_type", std::string(element_type_name(c.dtype()))},
             {"shape", fmt::format("{}", fmt::join(parts, ", "))}};
  l.outputs.push_back(PortInfo{c.dtype(), dims, {}});
  l.data = c;
  return {append(std::move(l)), 0};
}

Value Graph::ints(const std::vector<int64_t>& values) {
  return constant(Tensor::from_vector(values, {int64_t(values.size())}));
}

Value Graph::scalar(double value, DType type) {
  return constant(full({}, Scalar(value), type));
}

std::vector<DType> Graph::infer_types(std::string_view type, const std::vector<Value>& inputs,
                                      const Attributes& attrs, size_t num_outputs) const {
  DType t = inputs.empty() ? DType::F32 : this->type(inputs[0]);
  if (is_comparison(type) || type == "IsNaN" || type == "IsInf") t = DType::Bool;
  if (type == "ShapeOf" || type == "NonZero" || type == "Range" || type == "Convert") {
    std::string key = type == "Convert" ? "destination_type" : "output_type";
    t = dtype_of_element_type(attr_value(attrs, key));
  }
  if (type == "Select") t = this->type(inputs.at(1));
  std::vector<DType> out(num_outputs, t);
  if (type == "TopK" && num_outputs == 2)
    out[1] = dtype_of_element_type(attr_value(attrs, "index_element_type"));
  return out;
}

std::vector<Value> Graph::ops(std::string_view type, const std::vector<Value>& inputs,
                              size_t num_outputs, Attributes attrs, std::string source) {
  // Attributes the reader requires that every use of the op sets the same way.
  static const std::set<std::string, std::less<>> broadcasting = {
      "Add",       "Subtract", "Multiply",  "Divide",   "Power",        "Equal",
      "NotEqual",  "Less",     "LessEqual", "Greater",  "GreaterEqual", "LogicalAnd",
      "LogicalOr", "Maximum",  "Minimum",   "FloorMod", "Mod",          "Select"};
  if (broadcasting.contains(type) && attr_value(attrs, "auto_broadcast").empty())
    attrs.emplace_back("auto_broadcast", "numpy");
  if (type == "Divide" && attr_value(attrs, "m_pythondiv").empty())
    attrs.emplace_back("m_pythondiv", "true");
  if (type == "Reshape" && attr_value(attrs, "special_zero").empty())
    attrs.emplace_back("special_zero", "false");
  if (type == "Squeeze" && attr_value(attrs, "allow_axis_skip").empty())
    attrs.emplace_back("allow_axis_skip", "false");
  if (type == "Gather" && attr_value(attrs, "batch_dims").empty())
    attrs.emplace_back("batch_dims", "0");
  std::vector<PortInfo> outputs;
  for (DType t : infer_types(type, inputs, attrs, num_outputs))
    outputs.push_back(PortInfo{t, {}, {}});
  return add_layer(type, inputs, std::move(outputs), std::move(attrs), std::move(source));
}

Value Graph::op(std::string_view type, const std::vector<Value>& inputs, Attributes attrs,
                std::string source) {
  return ops(type, inputs, 1, std::move(attrs), std::move(source))[0];
}

std::vector<Value> Graph::add_layer(std::string_view type, const std::vector<Value>& inputs,
                                    std::vector<PortInfo> outputs, Attributes attrs,
                                    std::string source) {
  Layer l;
  l.name = fresh_name(type);
  l.type = std::string(type);
  l.attrs = std::move(attrs);
  l.inputs = inputs;
  l.outputs = std::move(outputs);
  l.source = std::move(source);
  const size_t n = l.outputs.size();
  int32_t id = append(std::move(l));
  std::vector<Value> out;
  for (size_t i = 0; i < n; ++i) out.push_back({id, int32_t(i)});
  return out;
}

int32_t Graph::result(Value v, const std::string& name) {
  Layer l;
  l.name = fresh_name(name + "/Result");
  l.type = "Result";
  l.inputs = {v};
  info(v).names.push_back(name);
  int32_t id = append(std::move(l));
  results_.push_back(id);
  return id;
}

int32_t Graph::assign(Value v, const std::string& variable_id) {
  Layer l;
  l.name = fresh_name(variable_id + "/Assign");
  l.type = "Assign";
  l.attrs = {{"variable_id", variable_id}};
  l.inputs = {v};
  l.outputs.push_back(PortInfo{type(v), info(v).dims, {}});
  return append(std::move(l));
}

void Graph::remap_ids(const std::vector<int32_t>& remap) {
  for (int32_t& id : parameters_) id = remap.at(size_t(id));
  for (int32_t& id : results_) id = remap.at(size_t(id));
}

const PortInfo& Graph::info(Value v) const {
  return layers_.at(size_t(v.layer)).outputs.at(size_t(v.port));
}

PortInfo& Graph::info(Value v) {
  return layers_.at(size_t(v.layer)).outputs.at(size_t(v.port));
}

}  // namespace ingot::exporters::openvino
