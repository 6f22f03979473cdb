#include "ingot/ir/graph.h"

#include <fmt/format.h>

#include "ingot/core/error.h"

namespace ingot::ir {

SourceLine SourceLine::from(const std::source_location& where) {
  SourceLine s;
  std::string file = where.file_name();
  size_t slash = file.rfind('/');
  s.file = slash == std::string::npos ? file : file.substr(slash + 1);
  s.line = where.line();
  s.function = where.function_name();
  return s;
}

std::string SourceLine::str() const {
  if (!known()) return "<unknown>";
  std::string fn = function;
  // "ingot::Tensor M::forward(const ingot::Tensor&)" -> "M::forward"
  if (size_t paren = fn.find('('); paren != std::string::npos) fn = fn.substr(0, paren);
  if (size_t space = fn.rfind(' '); space != std::string::npos) fn = fn.substr(space + 1);
  return fn.empty() ? fmt::format("{}:{}", file, line) : fmt::format("{}:{} in {}", file, line, fn);
}

std::string Graph::unique_name(const std::string& hint) {
  std::string base = hint.empty() ? "v" : hint;
  for (char& c : base) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  int& count = name_counts_[base];
  std::string name = count == 0 ? base : fmt::format("{}_{}", base, count);
  ++count;
  // "add_1" chosen here must not collide with a later hint "add_1".
  while (name_counts_.contains(name) && name != base) {
    name = fmt::format("{}_{}", base, count++);
  }
  name_counts_.try_emplace(name, 1);
  return name;
}

ValueId Graph::add_tensor_value(const std::string& name_hint, DType dtype, SymShape sizes) {
  ValueInfo v;
  v.kind = ValueInfo::Kind::Tensor;
  v.name = unique_name(name_hint);
  v.dtype = dtype;
  v.sizes = std::move(sizes);
  values_.push_back(std::move(v));
  return ValueId(values_.size() - 1);
}

ValueId Graph::add_sym_value(const std::string& name_hint, sym::Expr expr) {
  ValueInfo v;
  v.kind = ValueInfo::Kind::SymInt;
  v.name = unique_name(name_hint);
  v.dtype = DType::I64;
  v.expr = std::move(expr);
  values_.push_back(std::move(v));
  return ValueId(values_.size() - 1);
}

Node& Graph::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return nodes_.back();
}

std::vector<ValueId> Graph::node_inputs(const Node& n) {
  std::vector<ValueId> ids;
  for (const Argument& a : n.args) {
    if (auto* t = std::get_if<TensorRef>(&a)) ids.push_back(t->id);
    if (auto* l = std::get_if<OptionalValueList>(&a)) {
      for (auto& e : *l) {
        if (e) ids.push_back(*e);
      }
    }
  }
  return ids;
}

// torch's short dtype names in printed graphs: f32, bf16, i64, b8, ...
std::string_view dtype_short_name(DType t) {
  static constexpr std::string_view kNames[] = {"b8",  "u8",  "i8",   "i16", "i32",
                                                "i64", "f16", "bf16", "f32", "f64"};
  return kNames[int(t)];
}

std::string meta_str(const ValueInfo& v) {
  if (!v.is_tensor()) return fmt::format("Sym({})", v.expr.str());
  std::string s = fmt::format("{}[", dtype_short_name(v.dtype));
  for (size_t i = 0; i < v.sizes.size(); ++i) s += (i ? ", " : "") + v.sizes[i].str();
  return s + "]";
}

std::string argument_str(const Graph& g, const Argument& a) {
  struct Printer {
    const Graph& g;
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(const TensorRef& t) const { return g.value(t.id).name; }
    std::string operator()(const OptionalValueList& l) const {
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i)
        s += (i ? ", " : "") + (l[i] ? g.value(*l[i]).name : "None");
      return s + "]";
    }
    std::string operator()(const sym::Expr& e) const { return e.str(); }
    std::string operator()(const std::vector<sym::Expr>& l) const {
      std::string s = "[";
      for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + l[i].str();
      return s + "]";
    }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const Scalar& s) const { return s.str(); }
    std::string operator()(DType t) const { return fmt::format("torch.{}", dtype_name(t)); }
    std::string operator()(const std::string& s) const { return fmt::format("'{}'", s); }
  };
  return std::visit(Printer{g}, a);
}

Value argument_to_value(const Argument& a, const std::function<Tensor(ValueId)>& tensor_of,
                        const std::function<SymInt(const sym::Expr&)>& int_of) {
  struct Convert {
    const std::function<Tensor(ValueId)>& tensor_of;
    const std::function<SymInt(const sym::Expr&)>& int_of;
    Value operator()(std::monostate) const { return Value(); }
    Value operator()(const TensorRef& t) const { return tensor_of(t.id); }
    Value operator()(const OptionalValueList& l) const {
      TensorList ts;
      for (const auto& e : l) ts.push_back(e ? tensor_of(*e) : Tensor());
      return ts;
    }
    Value operator()(const sym::Expr& e) const { return int_of(e); }
    Value operator()(const std::vector<sym::Expr>& l) const {
      SymIntList v;
      for (const auto& e : l) v.push_back(int_of(e));
      return v;
    }
    Value operator()(double d) const { return d; }
    Value operator()(bool b) const { return b; }
    Value operator()(const Scalar& s) const { return s; }
    Value operator()(DType t) const { return t; }
    Value operator()(const std::string& s) const { return s; }
  };
  return std::visit(Convert{tensor_of, int_of}, a);
}

std::string Graph::print(const std::string& indent) const {
  std::string out;
  SourceLine last;
  for (const Node& n : nodes_) {
    if (n.source.known() && (n.source.file != last.file || n.source.line != last.line)) {
      out += fmt::format("{}# File: {}\n", indent, n.source.str());
      last = n.source;
    }
    if (n.target == "assert") {
      out += fmt::format("{}assert {}  # {}\n", indent, n.condition->str(), n.message);
      continue;
    }
    std::string lhs;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ValueInfo& v = value(n.outputs[i]);
      lhs += fmt::format("{}{}: {}", i ? ", " : "", v.name, meta_str(v));
    }
    std::string args;
    for (size_t i = 0; i < n.args.size(); ++i)
      args += (i ? ", " : "") + argument_str(*this, n.args[i]);
    out += fmt::format("{}{} = {}({})\n", indent, lhs.empty() ? "_" : lhs, n.target, args);
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      const Graph& sub = *n.subgraphs[i];
      std::string params;
      for (size_t k = 0; k < sub.inputs.size(); ++k) {
        const ValueInfo& v = sub.value(sub.inputs[k]);
        params += fmt::format("{}{}: {}", k ? ", " : "", v.name, meta_str(v));
      }
      out += fmt::format("{}  subgraph {}({}):\n", indent, i, params);
      out += sub.print(indent + "    ");
      std::string rets;
      for (size_t k = 0; k < sub.outputs.size(); ++k)
        rets += (k ? ", " : "") + sub.value(sub.outputs[k]).name;
      out += fmt::format("{}    return ({})\n", indent, rets);
    }
  }
  return out;
}

}  // namespace ingot::ir
