#include "ingot/formats/pt2/writer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ingot/core/error.h"
#include "ingot/formats/pt2/reader.h"
#include "ingot/formats/pt2/zip.h"
#include "ingot/ops/registry.h"

namespace ingot::pt2 {
namespace {

using Json = nlohmann::json;
constexpr const char* kRoot = "model/";  // the archive's folder (any name works)

int64_t dtype_code(DType d) {
  switch (d) {
    case DType::U8:
      return 1;
    case DType::I8:
      return 2;
    case DType::I16:
      return 3;
    case DType::I32:
      return 4;
    case DType::I64:
      return 5;
    case DType::F16:
      return 6;
    case DType::F32:
      return 7;
    case DType::F64:
      return 8;
    case DType::Bool:
      return 12;
    case DType::BF16:
      return 13;
  }
  return 0;
}

// sympy's srepr of an ingot expression (what torch's deserializer sympifies).
std::string srepr(const sym::Expr& e, const std::set<std::string>& unbacked) {
  using sym::Kind;
  auto list = [&](const std::vector<sym::Expr>& args) {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + srepr(args[i], unbacked);
    return s;
  };
  switch (e.kind()) {
    case Kind::Integer:
      return fmt::format("Integer({})", e.value());
    case Kind::Boolean:
      return e.value() ? "true" : "false";
    case Kind::Symbol:
      return unbacked.count(e.name())
                 ? fmt::format("Symbol('{}', integer=True)", e.name())
                 : fmt::format("Symbol('{}', positive=True, integer=True)", e.name());
    case Kind::Add: {
      std::vector<std::string> terms;
      if (e->value != 0) terms.push_back(fmt::format("Integer({})", e->value));
      for (size_t i = 0; i < e->args.size(); ++i) {
        const int64_t k = e->coeffs[i];
        terms.push_back(k == 1
                            ? srepr(e->args[i], unbacked)
                            : fmt::format("Mul(Integer({}), {})", k, srepr(e->args[i], unbacked)));
      }
      if (terms.size() == 1) return terms[0];
      std::string s = "Add(";
      for (size_t i = 0; i < terms.size(); ++i) s += (i ? ", " : "") + terms[i];
      return s + ")";
    }
    case Kind::Mul: {
      // Repeated factors as powers.
      std::vector<std::pair<sym::Expr, int>> f;
      for (const auto& a : e->args) {
        if (!f.empty() && f.back().first == a)
          ++f.back().second;
        else
          f.push_back({a, 1});
      }
      std::vector<std::string> parts;
      for (const auto& [x, n] : f)
        parts.push_back(n == 1 ? srepr(x, unbacked)
                               : fmt::format("Pow({}, Integer({}))", srepr(x, unbacked), n));
      if (parts.size() == 1) return parts[0];
      std::string s = "Mul(";
      for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
      return s + ")";
    }
    case Kind::FloorDiv:
      return "FloorDiv(" + list(e->args) + ")";
    case Kind::Mod:
      return "PythonMod(" + list(e->args) + ")";
    case Kind::Min:
      return "Min(" + list(e->args) + ")";
    case Kind::Max:
      return "Max(" + list(e->args) + ")";
    case Kind::Eq:
      return "Eq(" + list(e->args) + ")";
    case Kind::Ne:
      return "Ne(" + list(e->args) + ")";
    case Kind::Lt:
      return "StrictLessThan(" + list(e->args) + ")";
    case Kind::Le:
      return "LessThan(" + list(e->args) + ")";
    case Kind::And:
      return "And(" + list(e->args) + ")";
    case Kind::Or:
      return "Or(" + list(e->args) + ")";
    case Kind::Not:
      return "Not(" + list(e->args) + ")";
  }
  return "";
}

// torch's serialized target for an ingot op name.
std::string target_of(const std::string& op) {
  const size_t ns = op.find("::");
  std::string space = "aten", rest = op;
  if (ns != std::string::npos) {
    space = op.substr(0, ns);
    rest = op.substr(ns + 2);
  }
  if (rest.find('.') == std::string::npos) rest += ".default";
  return "torch.ops." + space + "." + rest;
}

// ingot ops with no ATen op of that name and schema.
const std::set<std::string>& not_aten() {
  static const std::set<std::string> s = {"moe_experts"};
  return s;
}

// The tree as torch sees it: an optional is its value, or a None leaf (torch 2.15
// flattens None as a leaf: a constant input the caller passes as None).
TreeSpec torchify(const TreeSpec& s) {
  if (s.type == "optional")
    return s.children.empty() ? TreeSpec{"static", {}, {}, std::monostate{}}
                              : torchify(s.children[0]);
  TreeSpec t = s;
  for (TreeSpec& c : t.children) c = torchify(c);
  return t;
}

// Keyword arguments that are None in the program (an optional input the export left out,
// such as transformers' position_ids / token_type_ids, which the graph computes itself)
// are not written: torch matches the keywords a caller passes against the archive's
// exactly, so module(input_ids=..., attention_mask=...) works as with transformers' own
// export. The graph never reads them.
void drop_none_kwargs(TreeSpec& kwargs) {
  TreeSpec kept = kwargs;
  kept.keys.clear();
  kept.children.clear();
  for (size_t i = 0; i < kwargs.children.size(); ++i) {
    const TreeSpec& c = kwargs.children[i];
    if (c.type == "static" && std::holds_alternative<std::monostate>(c.value)) continue;
    kept.keys.push_back(kwargs.keys[i]);
    kept.children.push_back(c);
  }
  kwargs = std::move(kept);
}

// torch's TreeSpec text for an ingot tree (after torchify).
Json torch_treespec(const TreeSpec& s) {
  if (s.is_leaf())
    return Json{{"type", nullptr}, {"context", nullptr}, {"children_spec", Json::array()}};
  Json children = Json::array();
  for (const TreeSpec& c : s.children) children.push_back(torch_treespec(c));
  std::string type, context = "null";
  if (s.type == "tuple")
    type = "builtins.tuple";
  else if (s.type == "list")
    type = "builtins.list";
  else if (s.type == "optional")
    type = "builtins.tuple";
  else if (s.type == "dict" || s.type.rfind("transformers.", 0) == 0) {
    type = s.type == "dict" ? "builtins.dict" : s.type;
    context = Json(s.keys).dump();
  } else if (!s.keys.empty()) {  // an ingot user type: a dict of its fields for torch
    type = "builtins.dict";
    context = Json(s.keys).dump();
  } else {
    type = "builtins.tuple";
  }
  return Json{{"type", type}, {"context", context}, {"children_spec", children}};
}

Json constant_arg(const StaticValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return Json{{"as_none", true}};
  if (auto* i = std::get_if<int64_t>(&v)) return Json{{"as_int", *i}};
  if (auto* d = std::get_if<double>(&v)) return Json{{"as_float", *d}};
  if (auto* b = std::get_if<bool>(&v)) return Json{{"as_bool", *b}};
  return Json{{"as_string", std::get<std::string>(v)}};
}

class Writer {
 public:
  explicit Writer(const ExportedProgram& ep) : ep_(ep) {
    s_.graph = ep.graph.get();
    for (const auto& [name, r] : ep.range_constraints)
      if (!r.backed) unbacked_.insert(name);
  }

  std::string write();

 private:
  const ir::Graph& g() const { return *s_.graph; }

  Json sym_json(const sym::Expr& e) {
    if (e.is_integer()) return Json{{"as_int", e.value()}};
    Json ex{{"expr_str", srepr(e, unbacked_)}, {"hint", nullptr}};
    if (auto h = hint(e)) ex["hint"] = Json{{"as_int", *h}};
    return Json{{"as_expr", ex}};
  }
  std::optional<int64_t> hint(const sym::Expr& e) {
    try {
      return sym::evaluate(e, [&](const sym::Expr& s) -> int64_t {
        auto it = hints_.find(s.name());
        if (it == hints_.end()) throw ValueError("no hint");
        return it->second;
      });
    } catch (const Error&) {
      return std::nullopt;
    }
  }
  Json tensor_meta(DType dtype, const ir::SymShape& sizes, bool requires_grad) {
    Json sz = Json::array(), st = Json::array();
    std::vector<sym::Expr> strides(sizes.size(), sym::integer(1));
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = sym::mul(strides[d], sizes[d]);
    for (size_t d = 0; d < sizes.size(); ++d) {
      sz.push_back(sym_json(sizes[d]));
      st.push_back(sym_json(strides[d]));
    }
    return Json{{"dtype", dtype_code(dtype)},
                {"sizes", sz},
                {"requires_grad", requires_grad},
                {"device", {{"type", "cpu"}, {"index", nullptr}}},
                {"strides", st},
                {"storage_offset", {{"as_int", 0}}},
                {"layout", 7}};
  }

  // The name of a graph SymInt holding `e`, emitting the nodes that compute it.
  std::string sym_name(const sym::Expr& e);
  std::string emit_sym_op(const std::string& op, const std::vector<Json>& operands,
                          const sym::Expr& result, bool boolean);
  Json sym_operand(const sym::Expr& e) {
    if (e.is_integer()) return Json{{"as_int", e.value()}};
    if (e.is_boolean()) return Json{{"as_bool", e.value() != 0}};
    if (e.is_bool()) return Json{{"as_sym_bool", {{"as_name", sym_name(e)}}}};
    return Json{{"as_sym_int", {{"as_name", sym_name(e)}}}};
  }
  Json argument(const ir::Argument& a, const ArgType& t);
  void node(const ir::Node& n);
  void node_body(const ir::Node& n);
  void control_flow_node(const ir::Node& n);
  void item_node(const ir::Node& n);
  Json tensor_values();
  Json subgraph(const ir::Graph& sg, const std::string& name, bool single_tensor_return);
  Json tensor_ref(ir::ValueId id) const {
    return Json{{"as_tensor", {{"name", g().value(id).name}}}};
  }
  void push_node(const std::string& target, Json inputs, Json outputs, const std::string& name) {
    s_.nodes.push_back(Json{{"target", target},
                            {"inputs", std::move(inputs)},
                            {"outputs", std::move(outputs)},
                            {"metadata", Json::object()},
                            {"is_hop_single_tensor_return", nullptr},
                            {"name", name}});
  }
  void note_sources(ir::ValueId id) {
    const ir::ValueInfo& v = g().value(id);
    if (!v.is_tensor()) return;
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      if (v.sizes[d].is_symbol() && !s_.sources.count(v.sizes[d].name()))
        s_.sources[v.sizes[d].name()] = {v.name, d};
    }
  }
  std::string fresh(const std::string& hint) {
    for (int k = s_.counter[hint];; ++k) {
      std::string n = fmt::format("{}_{}", hint, k);
      if (!s_.used_names.count(n)) {
        s_.counter[hint] = k + 1;
        s_.used_names.insert(n);
        return n;
      }
    }
  }

  const ExportedProgram& ep_;
  std::set<std::string> params_;  // the program graph's parameter placeholders
  std::set<std::string> unbacked_;
  std::map<std::string, int64_t> hints_;
  // The graph being written (the program's, or a cond / map / while_loop subgraph):
  // torch deserializes each subgraph with its own names and value metadata, so a
  // subgraph gets its own scope (symbols it uses are re-derived from its own inputs).
  struct Scope {
    const ir::Graph* graph = nullptr;
    std::map<std::string, std::pair<std::string, size_t>> sources;  // symbol -> (tensor, dim)
    std::map<std::string, std::string> sym_names;                   // srepr -> graph name
    std::set<std::string> used_names;
    std::map<std::string, int> counter;
    Json nodes = Json::array();
    Json sym_int_values = Json::object();
    Json sym_bool_values = Json::object();
    Json extra_tensor_values = Json::object();  // tensors the writer adds (item's casts)
  };
  Scope s_;
};

std::string Writer::emit_sym_op(const std::string& op, const std::vector<Json>& operands,
                                const sym::Expr& result, bool boolean) {
  const std::string name = fresh(op.substr(op.rfind('.') + 1));
  Json inputs = Json::array();
  static const char* kNames[] = {"a", "b"};
  for (size_t i = 0; i < operands.size(); ++i)
    inputs.push_back(Json{{"name", kNames[i]}, {"arg", operands[i]}, {"kind", 1}});
  s_.nodes.push_back(
      Json{{"target", op},
           {"inputs", inputs},
           {"outputs",
            Json::array({Json{{boolean ? "as_sym_bool" : "as_sym_int", {{"as_name", name}}}}})},
           {"metadata", Json::object()},
           {"is_hop_single_tensor_return", nullptr},
           {"name", name}});
  Json value{{"as_expr", {{"expr_str", srepr(result, unbacked_)}, {"hint", nullptr}}}};
  if (auto h = hint(result))
    value["as_expr"]["hint"] = boolean ? Json{{"as_bool", *h != 0}} : Json{{"as_int", *h}};
  (boolean ? s_.sym_bool_values : s_.sym_int_values)[name] = value;
  return name;
}

std::string Writer::sym_name(const sym::Expr& e) {
  using sym::Kind;
  const std::string key = srepr(e, unbacked_);
  if (auto it = s_.sym_names.find(key); it != s_.sym_names.end()) return it->second;
  std::string name;
  auto binary = [&](const char* op, const sym::Expr& a, const sym::Expr& b, bool boolean) {
    return emit_sym_op(op, {sym_operand(a), sym_operand(b)}, e, boolean);
  };
  auto fold = [&](const char* op, bool boolean) {
    sym::Expr acc = e->args[0];
    std::string last;
    for (size_t i = 1; i < e->args.size(); ++i) {
      const sym::Expr next = rebuild(e, {e->args.begin(), e->args.begin() + long(i) + 1});
      last = emit_sym_op(op, {sym_operand(acc), sym_operand(e->args[i])}, next, boolean);
      s_.sym_names[srepr(next, unbacked_)] = last;
      acc = next;
    }
    return last;
  };
  switch (e.kind()) {
    case Kind::Symbol: {
      auto src = s_.sources.find(e.name());
      if (src == s_.sources.end())
        throw NotSupportedError(
            fmt::format("[pt2 write] symbol '{}' has no tensor whose size it is", e.name()));
      name = fresh("sym_size_int");
      s_.nodes.push_back(Json{
          {"target", "torch.ops.aten.sym_size.int"},
          {"inputs",
           Json::array(
               {Json{{"name", "self"},
                     {"arg", {{"as_tensor", {{"name", src->second.first}}}}},
                     {"kind", 1}},
                Json{{"name", "dim"}, {"arg", {{"as_int", src->second.second}}}, {"kind", 1}}})},
          {"outputs", Json::array({Json{{"as_sym_int", {{"as_name", name}}}}})},
          {"metadata", Json::object()},
          {"is_hop_single_tensor_return", nullptr},
          {"name", name}});
      s_.sym_int_values[name] = Json{{"as_expr", {{"expr_str", key}, {"hint", nullptr}}}};
      if (auto h = hint(e)) s_.sym_int_values[name]["as_expr"]["hint"] = Json{{"as_int", *h}};
      break;
    }
    case Kind::Add: {
      // c + k1*m1 + k2*m2 ...: one product per term with k != 1, then the sum.
      // k*m is itself an Add node (a sum of one scaled term), so it is emitted as a
      // product here rather than through sym_operand (which would come back to it).
      std::vector<sym::Expr> terms;
      std::vector<Json> term_ops;
      for (size_t i = 0; i < e->args.size(); ++i) {
        const int64_t k = e->coeffs[i];
        const sym::Expr t = k == 1 ? e->args[i] : sym::mul(sym::integer(k), e->args[i]);
        terms.push_back(t);
        if (k == 1) {
          term_ops.push_back(sym_operand(t));
        } else {
          const std::string tk = srepr(t, unbacked_);
          auto it = s_.sym_names.find(tk);
          const std::string n =
              it != s_.sym_names.end()
                  ? it->second
                  : emit_sym_op("_operator.mul", {Json{{"as_int", k}}, sym_operand(e->args[i])}, t,
                                false);
          s_.sym_names[tk] = n;
          term_ops.push_back(Json{{"as_sym_int", {{"as_name", n}}}});
        }
      }
      sym::Expr acc = terms[0];
      Json acc_op = term_ops[0];
      name = term_ops[0]["as_sym_int"]["as_name"].get<std::string>();
      for (size_t i = 1; i <= terms.size(); ++i) {
        if (i == terms.size() && e->value == 0) break;
        const sym::Expr rhs = i < terms.size() ? terms[i] : sym::integer(e->value);
        const Json rhs_op = i < terms.size() ? term_ops[i] : Json{{"as_int", e->value}};
        const sym::Expr next = sym::add(acc, rhs);
        name = emit_sym_op("_operator.add", {acc_op, rhs_op}, next, false);
        s_.sym_names[srepr(next, unbacked_)] = name;
        acc = next;
        acc_op = Json{{"as_sym_int", {{"as_name", name}}}};
      }
      break;
    }
    case Kind::Mul:
      name = fold("_operator.mul", false);
      break;
    case Kind::FloorDiv:
      name = binary("_operator.floordiv", e->args[0], e->args[1], false);
      break;
    case Kind::Mod:
      name = binary("_operator.mod", e->args[0], e->args[1], false);
      break;
    case Kind::Min:
      name = fold("torch.sym_min", false);
      break;
    case Kind::Max:
      name = fold("torch.sym_max", false);
      break;
    case Kind::Eq:
      name = binary("_operator.eq", e->args[0], e->args[1], true);
      break;
    case Kind::Ne:
      name = binary("_operator.ne", e->args[0], e->args[1], true);
      break;
    case Kind::Lt:
      name = binary("_operator.lt", e->args[0], e->args[1], true);
      break;
    case Kind::Le:
      name = binary("_operator.le", e->args[0], e->args[1], true);
      break;
    case Kind::And:
      name = fold("_operator.and_", true);
      break;
    case Kind::Or:
      name = fold("_operator.or_", true);
      break;
    case Kind::Not:
      name = emit_sym_op("torch.sym_not", {sym_operand(e->args[0])}, e, true);
      break;
    default:
      throw InternalError("[pt2 write] unexpected constant expression");
  }
  s_.sym_names[key] = name;
  return name;
}

Json Writer::argument(const ir::Argument& a, const ArgType& t) {
  if (std::holds_alternative<std::monostate>(a)) return Json{{"as_none", true}};
  if (auto* r = std::get_if<ir::TensorRef>(&a))
    return Json{{"as_tensor", {{"name", g().value(r->id).name}}}};
  if (auto* l = std::get_if<ir::OptionalValueList>(&a)) {
    Json out = Json::array();
    if (t.elements_optional) {
      for (const auto& e : *l)
        out.push_back(e ? Json{{"as_tensor", {{"name", g().value(*e).name}}}}
                        : Json{{"as_none", true}});
      return Json{{"as_optional_tensors", out}};
    }
    for (const auto& e : *l) out.push_back(Json{{"name", g().value(*e).name}});
    return Json{{"as_tensors", out}};
  }
  if (auto* e = std::get_if<sym::Expr>(&a)) {
    if (e->is_integer()) {
      if (t.base == BaseType::Float) return Json{{"as_float", double(e->value())}};
      return Json{{"as_int", e->value()}};
    }
    return Json{{"as_sym_int", {{"as_name", sym_name(*e)}}}};
  }
  if (auto* l = std::get_if<std::vector<sym::Expr>>(&a)) {
    bool constant = true;
    for (const auto& e : *l) constant = constant && e.is_integer();
    Json out = Json::array();
    for (const auto& e : *l) {
      if (constant)
        out.push_back(e.value());
      else
        out.push_back(e.is_integer() ? Json{{"as_int", e.value()}}
                                     : Json{{"as_name", sym_name(e)}});
    }
    return constant ? Json{{"as_ints", out}} : Json{{"as_sym_ints", out}};
  }
  if (auto* d = std::get_if<double>(&a)) {
    if (std::isinf(*d)) return Json{{"as_float", *d > 0 ? "Infinity" : "-Infinity"}};
    if (std::isnan(*d)) return Json{{"as_float", "NaN"}};
    return Json{{"as_float", *d}};
  }
  if (auto* b = std::get_if<bool>(&a)) return Json{{"as_bool", *b}};
  if (auto* s = std::get_if<Scalar>(&a)) {
    if (s->is_bool()) return Json{{"as_bool", s->to_int() != 0}};
    if (s->is_integral()) return Json{{"as_int", s->to_int()}};
    const double d = s->to_double();
    if (std::isinf(d)) return Json{{"as_float", d > 0 ? "Infinity" : "-Infinity"}};
    if (std::isnan(d)) return Json{{"as_float", "NaN"}};
    return Json{{"as_float", d}};
  }
  if (auto* dt = std::get_if<DType>(&a)) return Json{{"as_scalar_type", dtype_code(*dt)}};
  return Json{{"as_string", std::get<std::string>(a)}};
}

// Every torch node written for `n` carries its user line as torch's stack_trace
// metadata (one frame), so torch's printed graph and errors name it too.
void Writer::node(const ir::Node& n) {
  const size_t first = s_.nodes.size();
  node_body(n);
  if (!n.source.known()) return;
  std::string fn = n.source.function;
  if (size_t paren = fn.find('('); paren != std::string::npos) fn = fn.substr(0, paren);
  if (size_t space = fn.rfind(' '); space != std::string::npos) fn = fn.substr(space + 1);
  const std::string frame = fmt::format("File \"{}\", line {}, in {}", n.source.file, n.source.line,
                                        fn.empty() ? "<unknown>" : fn);
  for (size_t i = first; i < s_.nodes.size(); ++i) s_.nodes[i]["metadata"]["stack_trace"] = frame;
}

void Writer::node_body(const ir::Node& n) {
  if (n.target == "cond" || n.target == "map" || n.target == "while_loop")
    return control_flow_node(n);
  if (n.target == "item") return item_node(n);
  if (n.target == "assert") {
    const std::string cond = sym_name(*n.condition);
    s_.nodes.push_back(Json{
        {"target", "torch.ops.aten._assert_scalar.default"},
        {"inputs",
         Json::array(
             {Json{{"name", "self"}, {"arg", {{"as_sym_bool", {{"as_name", cond}}}}}, {"kind", 1}},
              Json{{"name", "assert_msg"},
                   {"arg", {{"as_string", n.message.empty() ? "ingot runtime assert" : n.message}}},
                   {"kind", 1}}})},
        {"outputs", Json::array()},
        {"metadata", Json::object()},
        {"is_hop_single_tensor_return", nullptr},
        {"name", fresh("_assert_scalar")}});
    return;
  }
  const OpDef& def = OpRegistry::instance().get(n.target);
  Json inputs = Json::array();
  for (size_t i = 0; i < def.schema.arguments.size(); ++i) {
    const auto& p = def.schema.arguments[i];
    inputs.push_back(Json{
        {"name", p.name}, {"arg", argument(n.args[i], p.type)}, {"kind", p.kwarg_only ? 2 : 1}});
  }
  // ingot's tensors are always logically contiguous after a copy; torch's clone /
  // _to_copy default to preserving strides (a later view could then fail), so copies
  // ask for the contiguous format.
  if (n.target == "clone" || n.target == "_to_copy")
    inputs.push_back(
        Json{{"name", "memory_format"}, {"arg", {{"as_memory_format", 1}}}, {"kind", 2}});
  Json outputs = Json::array();
  const bool list_return = !def.schema.returns.empty() && def.schema.returns[0].type.is_list;
  if (list_return) {
    Json names = Json::array();
    for (ir::ValueId o : n.outputs) names.push_back(Json{{"name", g().value(o).name}});
    outputs.push_back(Json{{"as_tensors", names}});
  } else {
    for (ir::ValueId o : n.outputs)
      outputs.push_back(Json{{"as_tensor", {{"name", g().value(o).name}}}});
  }
  const std::string name =
      n.outputs.size() == 1 && !list_return ? g().value(n.outputs[0]).name : fresh("node");
  s_.nodes.push_back(Json{{"target", target_of(n.target)},
                          {"inputs", inputs},
                          {"outputs", outputs},
                          {"metadata", Json::object()},
                          {"is_hop_single_tensor_return", nullptr},
                          {"name", name}});
  for (ir::ValueId o : n.outputs) note_sources(o);
}

// torch.ops.higher_order.cond(pred, true_graph, false_graph, operands),
// map_impl(body_graph, xs, pos_args), while_loop(cond_graph, body_graph, carried,
// additional). ingot's node arguments are laid out the same way, with the values the
// subgraphs capture from the enclosing graph appended (every subgraph takes them after
// its own inputs): they join torch's operands / pos_args / additional inputs.
void Writer::control_flow_node(const ir::Node& n) {
  auto tensors = [&](size_t from, size_t to) {
    Json l = Json::array();
    for (size_t i = from; i < to; ++i) {
      const auto* r = std::get_if<ir::TensorRef>(&n.args[i]);
      if (!r)
        throw InternalError(fmt::format("[pt2 write] {} argument {} is not a tensor", n.target, i));
      l.push_back(Json{{"name", g().value(r->id).name}});
    }
    return Json{{"as_tensors", l}};
  };
  auto count = [&](const char* what) {
    const auto* e = std::get_if<sym::Expr>(&n.args.at(0));
    if (!e || !e->is_integer() || e->value() < 0 || size_t(e->value()) >= n.args.size() + 1)
      throw InternalError(fmt::format("[pt2 write] {}: bad count of {}", n.target, what));
    return size_t(e->value());
  };
  Json inputs = Json::array();
  auto add = [&](Json arg) {
    inputs.push_back(Json{{"name", ""}, {"arg", std::move(arg)}, {"kind", 1}});
  };
  auto add_graph = [&](size_t k, const std::string& prefix, bool single) {
    const std::string name = fresh(prefix);
    Json graph = subgraph(*n.subgraphs.at(k), name, single);
    add(Json{{"as_graph", {{"name", name}, {"graph", std::move(graph)}}}});
  };
  std::string target;
  if (n.target == "cond") {
    target = "torch.ops.higher_order.cond";
    if (const auto* r = std::get_if<ir::TensorRef>(&n.args.at(0)))
      add(tensor_ref(r->id));
    else
      add(Json{{"as_sym_bool", {{"as_name", sym_name(std::get<sym::Expr>(n.args[0]))}}}});
    add_graph(0, "true_graph", false);
    add_graph(1, "false_graph", false);
    add(tensors(1, n.args.size()));
  } else if (n.target == "map") {
    target = "torch.ops.higher_order.map_impl";
    const size_t xs = count("mapped tensors");
    add_graph(0, "body_graph", false);
    add(tensors(1, 1 + xs));
    add(tensors(1 + xs, n.args.size()));
  } else {
    target = "torch.ops.higher_order.while_loop";
    const size_t carried = count("carried tensors");
    add_graph(0, "while_loop_cond_graph", true);  // cond_fn returns one tensor, not a tuple
    add_graph(1, "while_loop_body_graph", false);
    add(tensors(1, 1 + carried));
    add(tensors(1 + carried, n.args.size()));
  }
  Json outputs = Json::array();
  for (ir::ValueId o : n.outputs) outputs.push_back(tensor_ref(o));
  push_node(target, std::move(inputs), std::move(outputs), fresh(n.target));
  s_.nodes.back()["is_hop_single_tensor_return"] = false;
  for (ir::ValueId o : n.outputs) note_sources(o);
}

// item(): aten._local_scalar_dense, whose SymInt output binds the unbacked symbol. ingot
// reads a bool tensor as the integer 0 / 1 (torch would give a SymBool), so a bool
// tensor is cast to int64 first.
void Writer::item_node(const ir::Node& n) {
  const ir::ValueInfo& src = g().value(std::get<ir::TensorRef>(n.args.at(0)).id);
  const ir::ValueInfo& out = g().value(n.outputs.at(0));
  std::string in = src.name;
  if (src.dtype == DType::Bool) {
    in = fresh("_to_copy");
    push_node(
        "torch.ops.aten._to_copy.default",
        Json::array(
            {Json{{"name", "self"}, {"arg", {{"as_tensor", {{"name", src.name}}}}}, {"kind", 1}},
             Json{{"name", "dtype"},
                  {"arg", {{"as_scalar_type", dtype_code(DType::I64)}}},
                  {"kind", 2}}}),
        Json::array({Json{{"as_tensor", {{"name", in}}}}}), in);
    s_.extra_tensor_values[in] = tensor_meta(DType::I64, src.sizes, false);
  }
  push_node(
      "torch.ops.aten._local_scalar_dense.default",
      Json::array({Json{{"name", "self"}, {"arg", {{"as_tensor", {{"name", in}}}}}, {"kind", 1}}}),
      Json::array({Json{{"as_sym_int", {{"as_name", out.name}}}}}), out.name);
  const std::string key = srepr(out.expr, unbacked_);
  s_.sym_int_values[out.name] = Json{{"as_expr", {{"expr_str", key}, {"hint", nullptr}}}};
  s_.sym_names[key] = out.name;
}

// Tensor metadata of every tensor value of the current graph.
Json Writer::tensor_values() {
  Json values = s_.extra_tensor_values;
  for (size_t i = 0; i < g().num_values(); ++i) {
    const ir::ValueInfo& v = g().value(ir::ValueId(i));
    if (v.is_tensor())
      values[v.name] =
          tensor_meta(v.dtype, v.sizes, s_.graph == ep_.graph.get() && params_.count(v.name) > 0);
  }
  return values;
}

// A subgraph in its own scope. Symbols its nodes need come from sym_size of its own
// inputs. An output that is an input (or repeats an output) is cloned: torch's
// higher-order ops refuse branches whose outputs alias their inputs.
Json Writer::subgraph(const ir::Graph& sg, const std::string& name, bool single_tensor_return) {
  Scope outer = std::move(s_);
  s_ = Scope{};
  s_.graph = &sg;
  struct Restore {
    Writer* w;
    Scope* outer;
    ~Restore() { w->s_ = std::move(*outer); }
  } restore{this, &outer};
  for (size_t i = 0; i < sg.num_values(); ++i) s_.used_names.insert(sg.value(ir::ValueId(i)).name);
  for (ir::ValueId id : sg.inputs) note_sources(id);
  for (const ir::Node& n : sg.nodes()) node(n);
  Json inputs = Json::array(), outputs = Json::array();
  for (ir::ValueId id : sg.inputs) {
    if (!sg.value(id).is_tensor())
      throw NotSupportedError(
          fmt::format("[pt2 write] subgraph '{}': a SymInt input is not supported", name));
    inputs.push_back(tensor_ref(id));
  }
  std::set<ir::ValueId> seen(sg.inputs.begin(), sg.inputs.end());
  for (ir::ValueId id : sg.outputs) {
    const ir::ValueInfo& v = sg.value(id);
    if (!v.is_tensor())
      throw NotSupportedError(
          fmt::format("[pt2 write] subgraph '{}': a SymInt output is not supported", name));
    if (!seen.insert(id).second) {
      const std::string copy = fresh("clone");
      push_node("torch.ops.aten.clone.default",
                Json::array({Json{
                    {"name", "self"}, {"arg", {{"as_tensor", {{"name", v.name}}}}}, {"kind", 1}}}),
                Json::array({Json{{"as_tensor", {{"name", copy}}}}}), copy);
      s_.extra_tensor_values[copy] = tensor_meta(v.dtype, v.sizes, false);
      outputs.push_back(Json{{"as_tensor", {{"name", copy}}}});
    } else {
      outputs.push_back(tensor_ref(id));
    }
  }
  if (single_tensor_return && outputs.size() != 1)
    throw InternalError(fmt::format("[pt2 write] subgraph '{}' returns {} tensors, one expected",
                                    name, outputs.size()));
  return Json{{"inputs", inputs},
              {"outputs", outputs},
              {"nodes", s_.nodes},
              {"tensor_values", tensor_values()},
              {"sym_int_values", s_.sym_int_values},
              {"sym_bool_values", s_.sym_bool_values},
              {"is_single_tensor_return", single_tensor_return},
              {"custom_obj_values", Json::object()},
              {"sym_float_values", Json::object()}};
}

std::string Writer::write() {
  // What cannot be written, all at once.
  std::map<std::string, int> missing;
  for (const ir::Node& n : g().nodes()) {
    if (not_aten().count(n.target)) ++missing[n.target];
  }
  if (!missing.empty()) {
    std::vector<std::string> parts;
    for (const auto& [op, k] : missing) parts.push_back(fmt::format("{} (x{})", op, k));
    throw NotSupportedError(
        fmt::format("[pt2 write] the program uses ops the .pt2 writer cannot express as ATen: {}",
                    fmt::join(parts, ", ")));
  }
  for (size_t i = 0; i < g().num_values(); ++i)
    s_.used_names.insert(g().value(ir::ValueId(i)).name);

  // Hints: the example inputs' sizes for the user inputs' symbols.
  size_t user = 0;
  for (size_t i = 0; i < ep_.signature.inputs.size(); ++i) {
    if (ep_.signature.inputs[i].kind != InputKind::UserInput) continue;
    const ir::ValueInfo& v = g().value(g().inputs[i]);
    if (user < ep_.example_inputs.size() &&
        ep_.example_inputs[user].dim() == int64_t(v.sizes.size())) {
      for (size_t d = 0; d < v.sizes.size(); ++d)
        if (v.sizes[d].is_symbol())
          hints_[v.sizes[d].name()] = ep_.example_inputs[user].size(int64_t(d));
    }
    ++user;
  }
  for (const auto& [name, r] : ep_.range_constraints) {
    if (!hints_.count(name) && r.backed) hints_[name] = std::max<int64_t>(r.range.lo, 2);
  }
  for (ir::ValueId id : g().inputs) note_sources(id);

  // Signature and placeholders: state first (ingot's order), then the user inputs in
  // tree order, static leaves as constant inputs.
  Json input_specs = Json::array(), graph_inputs = Json::array();
  std::vector<TreeSpec> leaves;
  std::function<void(const TreeSpec&)> collect = [&](const TreeSpec& s) {
    if (s.is_leaf()) leaves.push_back(s);
    for (const TreeSpec& c : s.children) collect(c);
  };
  // One top-level dict / user type (transformers' inputs) becomes torch's kwargs.
  TreeSpec torch_in = torchify(ep_.in_spec);
  const bool as_kwargs = torch_in.children.size() == 1 && !torch_in.children[0].keys.empty() &&
                         !torch_in.children[0].is_leaf();
  if (as_kwargs) drop_none_kwargs(torch_in.children[0]);
  collect(torch_in);
  const std::vector<std::string> paths = torch_in.leaf_paths("", ep_.input_names);
  std::vector<size_t> user_inputs;
  for (size_t i = 0; i < ep_.signature.inputs.size(); ++i) {
    const InputSpec& s = ep_.signature.inputs[i];
    const std::string& ph = g().value(g().inputs[i]).name;
    if (s.kind == InputKind::UserInput) {
      user_inputs.push_back(i);
      continue;
    }
    graph_inputs.push_back(Json{{"as_tensor", {{"name", ph}}}});
    if (s.kind == InputKind::Parameter)
      input_specs.push_back(
          Json{{"parameter", {{"arg", {{"name", ph}}}, {"parameter_name", s.target}}}});
    else if (s.kind == InputKind::Buffer)
      input_specs.push_back(Json{
          {"buffer",
           {{"arg", {{"name", ph}}}, {"buffer_name", s.target}, {"persistent", s.persistent}}}});
    else
      input_specs.push_back(
          Json{{"tensor_constant", {{"arg", {{"name", ph}}}, {"tensor_constant_name", s.target}}}});
  }
  size_t next_user = 0;
  for (size_t k = 0; k < leaves.size(); ++k) {
    if (leaves[k].type == "tensor") {
      if (next_user >= user_inputs.size())
        throw InternalError("[pt2 write] in_spec has more tensors than user inputs");
      const std::string& ph = g().value(g().inputs[user_inputs[next_user++]]).name;
      graph_inputs.push_back(Json{{"as_tensor", {{"name", ph}}}});
      input_specs.push_back(Json{{"user_input", {{"arg", {{"as_tensor", {{"name", ph}}}}}}}});
    } else {
      const Json c = constant_arg(leaves[k].value);
      graph_inputs.push_back(c);
      std::string name = k < paths.size() ? paths[k] : fmt::format("const_{}", k);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
      input_specs.push_back(Json{{"constant_input", {{"name", name}, {"value", c}}}});
    }
  }

  for (const InputSpec& s : ep_.signature.inputs)
    if (s.kind == InputKind::Parameter) params_.insert(s.name);
  for (const ir::Node& n : g().nodes()) node(n);

  // Outputs: mutations first (torch's order), then the user outputs.
  Json output_specs = Json::array(), graph_outputs = Json::array();
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < ep_.signature.outputs.size(); ++i) {
      const OutputSpec& o = ep_.signature.outputs[i];
      const bool user_out = o.kind == OutputKind::UserOutput;
      if (user_out != (pass == 1)) continue;
      const std::string& v = g().value(g().outputs[i]).name;
      graph_outputs.push_back(Json{{"as_tensor", {{"name", v}}}});
      if (o.kind == OutputKind::UserOutput)
        output_specs.push_back(Json{{"user_output", {{"arg", {{"as_tensor", {{"name", v}}}}}}}});
      else if (o.kind == OutputKind::BufferMutation)
        output_specs.push_back(
            Json{{"buffer_mutation", {{"arg", {{"name", v}}}, {"buffer_name", o.target}}}});
      else
        output_specs.push_back(
            Json{{"user_input_mutation", {{"arg", {{"name", v}}}, {"user_input_name", o.target}}}});
    }
  }

  Json range_constraints = Json::object();
  for (const auto& [name, r] : ep_.range_constraints) {
    Json lo = r.range.lo == sym::ValueRange::kNegInf ? Json() : Json(r.range.lo);
    Json hi = r.range.hi >= sym::ValueRange::kPosInf / 2 ? Json() : Json(r.range.hi);
    range_constraints[name] = Json{{"min_val", lo}, {"max_val", hi}};
  }

  // The call signature: the top-level arguments positional, or one dict's fields as
  // keyword arguments (module(input_ids=..., attention_mask=...)).
  Json args_spec{{"type", "builtins.tuple"}, {"context", "null"}, {"children_spec", Json::array()}};
  Json kwargs_spec{{"type", "builtins.dict"}, {"context", "[]"}, {"children_spec", Json::array()}};
  std::vector<std::string> arg_names;
  if (as_kwargs) {
    const TreeSpec& d = torch_in.children[0];
    kwargs_spec["context"] = Json(d.keys).dump();
    for (const TreeSpec& c : d.children) kwargs_spec["children_spec"].push_back(torch_treespec(c));
    arg_names = d.keys;
  } else {
    for (const TreeSpec& c : torch_in.children)
      args_spec["children_spec"].push_back(torch_treespec(c));
    arg_names = ep_.input_names;
    for (size_t i = arg_names.size(); i < torch_in.children.size(); ++i)
      arg_names.push_back(fmt::format("arg{}", i));
  }
  Json in_spec{{"type", "builtins.tuple"},
               {"context", "null"},
               {"children_spec", Json::array({args_spec, kwargs_spec})}};

  Json graph{{"inputs", graph_inputs},
             {"outputs", graph_outputs},
             {"nodes", s_.nodes},
             {"tensor_values", tensor_values()},
             {"sym_int_values", s_.sym_int_values},
             {"sym_bool_values", s_.sym_bool_values},
             {"is_single_tensor_return", false},
             {"custom_obj_values", Json::object()},
             {"sym_float_values", Json::object()}};
  Json program{
      {"graph_module",
       {{"graph", graph},
        {"signature", {{"input_specs", input_specs}, {"output_specs", output_specs}}},
        {"module_call_graph",
         Json::array({Json{{"fqn", ""},
                           {"signature",
                            {{"inputs", Json::array()},
                             {"outputs", Json::array()},
                             {"in_spec", Json::array({1, in_spec}).dump()},
                             {"out_spec", Json::array({1, torch_treespec(ep_.out_spec)}).dump()},
                             {"forward_arg_names", arg_names}}}}})},
        {"metadata", Json::object()},
        {"treespec_namedtuple_fields", Json::object()}}},
      {"opset_version", {{"aten", 10}}},
      {"range_constraints", range_constraints},
      {"schema_version", {{"major", kSchemaMajor}, {"minor", 20}}},
      {"verifiers", Json::array({"ATEN"})},
      {"torch_version", "2.15.0"},
      {"guards_code", Json::array()}};

  // Payloads: one raw record per tensor, described by the config files.
  std::string out;
  ZipWriter zip([&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  auto payloads = [&](const std::map<std::string, Tensor>& tensors, const char* dir,
                      const char* prefix, bool mark_params) {
    Json config = Json::object();
    size_t k = 0;
    for (const auto& [fqn, t0] : tensors) {
      const Tensor t =
          t0.is_contiguous() ? t0 : call_op(OpRegistry::instance().get("clone"), {t0}).at(0);
      const std::string file = fmt::format("{}{}", prefix, k++);
      zip.add(std::string(kRoot) + dir + file,
              std::string_view(static_cast<const char*>(t.raw_data()), t.nbytes()));
      ir::SymShape sizes;
      for (int64_t s : t.sizes()) sizes.push_back(sym::integer(s));
      bool is_param = false;
      if (mark_params) {
        for (const InputSpec& s : ep_.signature.inputs)
          if (s.kind == InputKind::Parameter && s.target == fqn) is_param = true;
      }
      config[fqn] = Json{{"path_name", file},
                         {"is_param", is_param},
                         {"use_pickle", false},
                         {"tensor_meta", tensor_meta(t.dtype(), sizes, false)}};
    }
    return Json{{"config", config}}.dump();
  };
  zip.add(std::string(kRoot) + "archive_format", "pt2");
  zip.add(std::string(kRoot) + "archive_version", std::to_string(kArchiveVersion));
  zip.add(std::string(kRoot) + "byteorder", "little");
  zip.add(std::string(kRoot) + ".data/version", "6\n");
  // torch keeps non-persistent buffers out of the state dict: they travel as constants.
  std::map<std::string, Tensor> state = ep_.state, constants_in = ep_.constants;
  for (const InputSpec& s : ep_.signature.inputs) {
    if (s.kind == InputKind::Buffer && !s.persistent && state.count(s.target)) {
      constants_in[s.target] = state.at(s.target);
      state.erase(s.target);
    }
  }
  const std::string weights = payloads(state, "data/weights/", "weight_", true);
  zip.add(std::string(kRoot) + "data/weights/model_weights_config.json", weights);
  const std::string constants = payloads(constants_in, "data/constants/", "tensor_", false);
  zip.add(std::string(kRoot) + "data/constants/model_constants_config.json", constants);
  zip.add(std::string(kRoot) + "data/sample_inputs/model.pt", "");
  zip.add(std::string(kRoot) + "models/model.json", program.dump());
  zip.finish();
  return out;
}

}  // namespace

std::string save_pt2_to_bytes(const ExportedProgram& program) {
  return Writer(program).write();
}

void save_pt2(const ExportedProgram& program, const std::string& path) {
  const std::string bytes = save_pt2_to_bytes(program);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  INGOT_CHECK(f != nullptr, IoError, "[pt2 write] cannot create '{}': {}", tmp,
              std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    INGOT_THROW(IoError, "[pt2 write] cannot write '{}': {}", path, std::strerror(errno));
  }
}

}  // namespace ingot::pt2
