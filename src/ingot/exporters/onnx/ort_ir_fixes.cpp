// ONNX IR fixes for ONNX Runtime, each next to the reason it exists.
#include <fmt/format.h>

#include <map>
#include <set>

#include "ingot/exporters/onnx/ir_fixes.h"

namespace ingot::exporters::onnx {

namespace {

// Element types of the model's values, inferred node by node from what is declared
// (inputs, initializers, value_info, Constant values) and simple op rules.
class TypeMap {
 public:
  void declare(const std::string& name, DataType t) { types_[name] = t; }
  DataType of(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? DataType::Undefined : it->second;
  }

  void declare_graph(const GraphProto& g) {
    for (const auto& v : g.input) {
      if (v.type) declare(v.name, v.type->elem_type);
    }
    for (const auto& t : g.initializer) declare(t.name, t.data_type);
    for (const auto& v : g.value_info) {
      if (v.type) declare(v.name, v.type->elem_type);
    }
  }

  // The output types of n by the op's rule (Undefined where unknown).
  std::vector<DataType> infer(const NodeProto& n) const {
    const std::string& op = n.op_type;
    const DataType first =
        n.input.empty() || n.input[0].empty() ? DataType::Undefined : of(n.input[0]);
    std::vector<DataType> out(n.output.size(), first);
    static const std::set<std::string> kBool = {"Equal",          "Less", "LessOrEqual", "Greater",
                                                "GreaterOrEqual", "Not",  "And",         "Or",
                                                "IsNaN",          "IsInf"};
    static const std::set<std::string> kInt64 = {"Shape", "Size", "NonZero", "ArgMax", "ArgMin"};
    if (op == "Constant") {
      const AttributeProto* v = n.find_attribute("value");
      const auto* t = v ? std::get_if<TensorProto>(&v->value) : nullptr;
      out.assign(out.size(), t ? t->data_type : DataType::Undefined);
    } else if (op == "Cast") {
      const AttributeProto* to = n.find_attribute("to");
      out.assign(out.size(),
                 to ? DataType(int32_t(std::get<int64_t>(to->value))) : DataType::Undefined);
    } else if (kBool.contains(op)) {
      out.assign(out.size(), DataType::Bool);
    } else if (kInt64.contains(op)) {
      out.assign(out.size(), DataType::Int64);
    } else if (op == "TopK" && out.size() == 2) {
      out[1] = DataType::Int64;
    } else if (op == "Where" && n.input.size() == 3) {
      out.assign(out.size(), of(n.input[1]));
    } else if (op == "If" || op == "Loop" || op == "Scan") {
      for (size_t i = 0; i < out.size(); ++i) out[i] = of(n.output[i]);  // declared by value_info
    }
    return out;
  }

 private:
  std::map<std::string, DataType> types_;
};

// Ops that take any element type (or only move bytes) and need no bf16 rewrite.
const std::set<std::string>& type_agnostic() {
  static const std::set<std::string> s = {"Cast",     "Constant", "Shape", "Size",
                                          "Identity", "If",       "Loop",  "Scan"};
  return s;
}

// ONNX Runtime's CPU provider registers almost no bfloat16 kernels (no Add, Mul, MatMul,
// Softmax, ...), so a bfloat16 model fails to load there ("Could not find an
// implementation for Mul(14)"). This fix runs every node that reads or writes bfloat16
// in float32: its bfloat16 inputs are cast up and its bfloat16 outputs cast back down.
// That is also how ingot's kernels compute 16-bit floats (in float, one rounding per op),
// so results stay comparable. Remove when ORT's CPU provider gains bf16 kernels.
std::vector<std::string> ort_cpu_bfloat16_in_float(ModelProto& model) {
  TypeMap types;
  std::set<std::string> names;
  for_each_graph(model.graph, [&](GraphProto& g) {
    for (const auto& v : g.input) names.insert(v.name);
    for (const auto& t : g.initializer) names.insert(t.name);
    for (const auto& n : g.node) names.insert(n.output.begin(), n.output.end());
  });
  auto fresh = [&](const std::string& base) {
    std::string name = base + ".f32";
    for (int k = 1; names.contains(name); ++k) name = fmt::format("{}.f32_{}", base, k);
    names.insert(name);
    return name;
  };
  auto cast = [](const std::string& in, const std::string& out, DataType to) {
    NodeProto c;
    c.op_type = "Cast";
    c.name = out + "_cast";
    c.input = {in};
    c.output = {out};
    c.attribute.push_back(AttributeProto{"to", int64_t(to), ""});
    return c;
  };
  size_t rewritten = 0;
  std::function<void(GraphProto&)> fix = [&](GraphProto& g) {
    types.declare_graph(g);
    std::vector<NodeProto> out;
    for (NodeProto& n : g.node) {
      std::vector<DataType> out_types = types.infer(n);
      for (size_t i = 0; i < n.output.size(); ++i) {
        if (types.of(n.output[i]) == DataType::Undefined) types.declare(n.output[i], out_types[i]);
      }
      for (AttributeProto& a : n.attribute) {
        if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) fix(**sub);
      }
      bool touches = false;
      for (const auto& in : n.input)
        touches = touches || (!in.empty() && types.of(in) == DataType::BFloat16);
      for (const auto& o : n.output) touches = touches || types.of(o) == DataType::BFloat16;
      if (!touches || type_agnostic().contains(n.op_type) || !n.domain.empty()) {
        out.push_back(std::move(n));
        continue;
      }
      ++rewritten;
      for (std::string& in : n.input) {
        if (in.empty() || types.of(in) != DataType::BFloat16) continue;
        std::string up = fresh(in);
        out.push_back(cast(in, up, DataType::Float));
        types.declare(up, DataType::Float);
        in = up;
      }
      std::vector<NodeProto> downs;
      for (std::string& o : n.output) {
        if (types.of(o) != DataType::BFloat16) continue;
        std::string wide = fresh(o);
        types.declare(wide, DataType::Float);
        downs.push_back(cast(wide, o, DataType::BFloat16));
        o = wide;
      }
      out.push_back(std::move(n));
      for (NodeProto& d : downs) out.push_back(std::move(d));
    }
    g.node = std::move(out);
  };
  fix(model.graph);
  if (rewritten == 0) return {};
  return {fmt::format("{} bfloat16 nodes run in float32 (ONNX Runtime CPU has no bfloat16 kernels)",
                      rewritten)};
}

}  // namespace

INGOT_REGISTER_ONNX_IR_FIX(ort_cpu_bfloat16_in_float,
                           "ONNX Runtime's CPU provider has no bfloat16 kernels",
                           ort_cpu_bfloat16_in_float);

}  // namespace ingot::exporters::onnx
