// Graphs in the archive: values, nodes with tagged arguments, subgraphs. Decoding checks
// everything the interpreter and the printer rely on, so a loaded graph can be printed,
// verified and run without touching an id out of range or a missing field.
#include <limits>

#include "ingot/formats/archive_codec.h"
#include "ingot/ops/registry.h"

namespace ingot::archive {

namespace {

// --- encoding ----------------------------------------------------------------------------

Json argument_to_json(const ir::Argument& a) {
  struct Enc {
    Json operator()(std::monostate) const { return Json{{"kind", "none"}}; }
    Json operator()(const ir::TensorRef& t) const {
      return Json{{"kind", "tensor"}, {"value", t.id}};
    }
    Json operator()(const ir::OptionalValueList& l) const {
      Json ids = Json::array();
      for (const auto& e : l) ids.push_back(e ? Json(*e) : Json(nullptr));
      return Json{{"kind", "tensors"}, {"value", std::move(ids)}};
    }
    Json operator()(const sym::Expr& e) const {
      return Json{{"kind", "sym"}, {"value", expr_to_json(e)}};
    }
    Json operator()(const std::vector<sym::Expr>& l) const {
      Json es = Json::array();
      for (const sym::Expr& e : l) es.push_back(expr_to_json(e));
      return Json{{"kind", "syms"}, {"value", std::move(es)}};
    }
    Json operator()(double d) const {
      return Json{{"kind", "float"}, {"value", double_to_json(d)}};
    }
    Json operator()(bool b) const { return Json{{"kind", "bool"}, {"value", b}}; }
    Json operator()(const Scalar& s) const {
      StaticValue v = s.is_bool()       ? StaticValue(s.to_bool())
                      : s.is_integral() ? StaticValue(s.to_int())
                                        : StaticValue(s.to_double());
      return Json{{"kind", "scalar"}, {"value", static_value_to_json(v)}};
    }
    Json operator()(DType t) const {
      return Json{{"kind", "dtype"}, {"value", std::string(dtype_name(t))}};
    }
    Json operator()(const std::string& s) const { return Json{{"kind", "string"}, {"value", s}}; }
  };
  return std::visit(Enc{}, a);
}

Json value_to_json(const ir::ValueInfo& v) {
  if (!v.is_tensor())
    return Json{{"kind", "symint"}, {"name", v.name}, {"expr", expr_to_json(v.expr)}};
  Json sizes = Json::array();
  for (const sym::Expr& e : v.sizes) sizes.push_back(expr_to_json(e));
  return Json{{"kind", "tensor"},
              {"name", v.name},
              {"dtype", std::string(dtype_name(v.dtype))},
              {"sizes", std::move(sizes)}};
}

Json node_to_json(const ir::Node& n) {
  Json args = Json::array();
  for (const ir::Argument& a : n.args) args.push_back(argument_to_json(a));
  Json j{{"target", n.target}, {"args", std::move(args)}, {"outputs", n.outputs}};
  if (n.source.known()) {
    j["source"] =
        Json{{"file", n.source.file}, {"line", n.source.line}, {"function", n.source.function}};
  }
  if (!n.subgraphs.empty()) {
    Json subs = Json::array();
    for (const auto& s : n.subgraphs) subs.push_back(graph_to_json(*s));
    j["subgraphs"] = std::move(subs);
  }
  if (n.condition) j["condition"] = expr_to_json(*n.condition);
  if (!n.message.empty()) j["message"] = n.message;
  return j;
}

// --- decoding ----------------------------------------------------------------------------

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

const char* argument_kind_name(const ir::Argument& a) {
  static constexpr const char* kNames[] = {"None",
                                           "a tensor",
                                           "a tensor list",
                                           "an integer expression",
                                           "an integer list",
                                           "a float",
                                           "a bool",
                                           "a scalar",
                                           "a dtype",
                                           "a string"};
  return kNames[a.index()];
}

// Does `a` have the kind an argument of type `t` has after the dispatcher's coercion
// (registry.cpp: coerce)?
bool matches(const ArgType& t, const ir::Argument& a) {
  if (std::holds_alternative<std::monostate>(a)) return t.optional;
  if (t.is_list) {
    if (t.base == BaseType::Tensor) {
      const auto* l = std::get_if<ir::OptionalValueList>(&a);
      if (!l) return false;
      if (!t.elements_optional) {
        for (const auto& e : *l) {
          if (!e) return false;
        }
      }
      return true;
    }
    if (t.base == BaseType::Int || t.base == BaseType::SymInt)
      return std::holds_alternative<std::vector<sym::Expr>>(a);
    return false;
  }
  switch (t.base) {
    case BaseType::Tensor:
      return std::holds_alternative<ir::TensorRef>(a);
    case BaseType::Int:
    case BaseType::SymInt:
      return std::holds_alternative<sym::Expr>(a);
    case BaseType::Float:
      return std::holds_alternative<double>(a);
    case BaseType::Bool:
      return std::holds_alternative<bool>(a);
    case BaseType::Scalar:
      // A symbolic size passed where a Scalar goes (arange's end) stays an expression.
      return std::holds_alternative<Scalar>(a) || std::holds_alternative<sym::Expr>(a);
    case BaseType::ScalarType:
      return std::holds_alternative<DType>(a);
    case BaseType::Str:
      return std::holds_alternative<std::string>(a);
  }
  return false;
}

class GraphDecoder {
 public:
  GraphDecoder(const std::set<std::string>& known, int depth) : known_(known), depth_(depth) {}

  std::shared_ptr<ir::Graph> decode(const JsonView& v) {
    if (depth_ > kMaxGraphDepth) v.fail("subgraphs nested deeper than {} levels", kMaxGraphDepth);
    g_ = std::make_shared<ir::Graph>();
    for (const JsonView& value : v.get("values").elements()) add_value(value);
    defined_.assign(g_->num_values(), false);
    for (const JsonView& in : v.get("inputs").elements()) {
      ir::ValueId id = value_id(in);
      if (defined_[size_t(id)]) in.fail("value {} is a graph input twice", id);
      defined_[size_t(id)] = true;
      g_->inputs.push_back(id);
    }
    JsonView nodes = v.get("nodes");
    for (const JsonView& n : nodes.elements()) g_->add_node(node(n));
    for (const JsonView& out : v.get("outputs").elements()) {
      ir::ValueId id = value_id(out);
      if (!defined_[size_t(id)]) out.fail("graph output '{}' is never defined", g_->value(id).name);
      g_->outputs.push_back(id);
    }
    return g_;
  }

 private:
  void add_value(const JsonView& v) {
    const std::string& kind = v.get("kind").as_string();
    const std::string& name = v.get("name").as_string();
    if (!is_identifier(name))
      v.get("name").fail("value name '{}' is not an identifier ([A-Za-z0-9_]+)", name);
    ir::ValueId id;
    if (kind == "tensor") {
      DType dtype = dtype_from_json(v.get("dtype"));
      ir::SymShape sizes;
      for (const JsonView& s : v.get("sizes").elements()) sizes.push_back(integer_expr(s));
      id = g_->add_tensor_value(name, dtype, std::move(sizes));
    } else if (kind == "symint") {
      id = g_->add_sym_value(name, integer_expr(v.get("expr")));
    } else {
      v.get("kind").fail("unknown value kind '{}' (expected tensor or symint)", kind);
    }
    if (g_->value(id).name != name) v.get("name").fail("value name '{}' is used twice", name);
  }

  sym::Expr integer_expr(const JsonView& v) {
    sym::Expr e = expr_from_json(v, known_);
    if (e.is_bool()) v.fail("expected an integer expression, got the condition {}", e.str());
    return e;
  }

  ir::ValueId value_id(const JsonView& v) {
    const int64_t id = v.as_int();
    if (id < 0 || uint64_t(id) >= g_->num_values()) {
      v.fail("value id {} is out of range: this graph has {} values", id, g_->num_values());
    }
    return ir::ValueId(id);
  }

  // A value read by a node: a tensor defined earlier.
  ir::ValueId use(const JsonView& v) {
    ir::ValueId id = value_id(v);
    if (!g_->value(id).is_tensor())
      v.fail("value '{}' is a symbolic integer, not a tensor", g_->value(id).name);
    if (!defined_[size_t(id)])
      v.fail("value '{}' is used before it is defined", g_->value(id).name);
    return id;
  }

  ir::Argument argument(const JsonView& v) {
    const std::string& kind = v.get("kind").as_string();
    if (kind == "none") return std::monostate{};
    JsonView value = v.get("value");
    if (kind == "tensor") return ir::TensorRef{use(value)};
    if (kind == "tensors") {
      ir::OptionalValueList l;
      for (const JsonView& e : value.elements())
        l.push_back(e.is_null() ? std::nullopt : std::optional(use(e)));
      return l;
    }
    if (kind == "sym") return expr_from_json(value, known_);
    if (kind == "syms") {
      std::vector<sym::Expr> l;
      for (const JsonView& e : value.elements()) l.push_back(integer_expr(e));
      return l;
    }
    if (kind == "float") return value.as_double();
    if (kind == "bool") return value.as_bool();
    if (kind == "scalar") {
      StaticValue s = static_value_from_json(value);
      if (auto* i = std::get_if<int64_t>(&s)) return Scalar(*i);
      if (auto* d = std::get_if<double>(&s)) return Scalar(*d);
      if (auto* b = std::get_if<bool>(&s)) return Scalar(*b);
      value.fail("a scalar is {{\"int\": i}}, {{\"float\": f}} or {{\"bool\": b}}");
    }
    if (kind == "dtype") return dtype_from_json(value);
    if (kind == "string") return value.as_string();
    v.get("kind").fail("unknown argument kind '{}'", kind);
  }

  ir::Node node(const JsonView& v) {
    ir::Node n;
    n.target = v.get("target").as_string();
    JsonView args = v.get("args");
    for (const JsonView& a : args.elements()) n.args.push_back(argument(a));
    if (auto src = v.find("source")) {
      n.source.file = src->get("file").as_string();
      const uint64_t line = src->get("line").as_uint();
      if (line > std::numeric_limits<uint32_t>::max())
        src->get("line").fail("line {} is out of range", line);
      n.source.line = uint32_t(line);
      n.source.function = src->get("function").as_string();
    }
    if (auto subs = v.find("subgraphs")) {
      for (const JsonView& s : subs->elements())
        n.subgraphs.push_back(GraphDecoder(known_, depth_ + 1).decode(s));
    }
    if (auto c = v.find("condition")) {
      n.condition = expr_from_json(*c, known_);
      if (!n.condition->is_bool())
        c->fail("an assert condition must be boolean, got {}", n.condition->str());
    }
    if (auto m = v.find("message")) n.message = m->as_string();
    JsonView outputs = v.get("outputs");
    for (const JsonView& o : outputs.elements()) n.outputs.push_back(value_id(o));
    check_node(n, v);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const ir::ValueId o = n.outputs[i];
      if (defined_[size_t(o)]) outputs.at(i).fail("value '{}' is defined twice", g_->value(o).name);
      defined_[size_t(o)] = true;
    }
    return n;
  }

  // The operands of a control-flow node after its leading argument: tensors.
  size_t operand_count(const ir::Node& n, const JsonView& v) {
    for (size_t i = 1; i < n.args.size(); ++i) {
      if (!std::holds_alternative<ir::TensorRef>(n.args[i])) {
        v.get("args").at(i).fail("{} operands must be tensors, got {}", n.target,
                                 argument_kind_name(n.args[i]));
      }
    }
    return n.args.size() - 1;
  }

  // The leading integer of map / while_loop: how many operands are mapped / carried.
  size_t leading_count(const ir::Node& n, const JsonView& v, size_t operands, size_t min) {
    const auto* e = std::get_if<sym::Expr>(&n.args[0]);
    if (!e || !e->is_integer() || e->value() < int64_t(min) || uint64_t(e->value()) > operands) {
      v.get("args").at(0).fail("{} needs an integer count in [{}, {}] first", n.target, min,
                               operands);
    }
    return size_t(e->value());
  }

  void expect_subgraphs(const ir::Node& n, const JsonView& v, size_t count, size_t inputs) {
    if (n.subgraphs.size() != count)
      v.fail("{} needs {} subgraphs, got {}", n.target, count, n.subgraphs.size());
    for (size_t i = 0; i < count; ++i) {
      if (n.subgraphs[i]->inputs.size() != inputs) {
        v.get("subgraphs")
            .at(i)
            .fail("{} passes {} operands to a subgraph with {} inputs", n.target, inputs,
                  n.subgraphs[i]->inputs.size());
      }
    }
  }

  void expect_outputs(const ir::Node& n, const JsonView& v, size_t count, bool tensors = true) {
    if (n.outputs.size() != count)
      v.fail("{} must have {} outputs, got {}", n.target, count, n.outputs.size());
    for (size_t i = 0; i < count; ++i) {
      if (g_->value(n.outputs[i]).is_tensor() != tensors) {
        v.get("outputs").at(i).fail("{} output '{}' must be {}", n.target,
                                    g_->value(n.outputs[i]).name,
                                    tensors ? "a tensor" : "a symbolic integer");
      }
    }
  }

  void check_node(const ir::Node& n, const JsonView& v) {
    const bool control = n.target == "cond" || n.target == "map" || n.target == "while_loop";
    if (!control && !n.subgraphs.empty())
      v.fail("only cond, map and while_loop have subgraphs, not {}", n.target);
    if (n.target != "assert" && n.condition)
      v.fail("only assert nodes have a condition, not {}", n.target);
    if (n.target == "assert") {
      if (!n.condition) v.fail("an assert node needs a condition");
      if (!n.args.empty() || !n.outputs.empty())
        v.fail("an assert node has no arguments and no outputs");
      return;
    }
    if (n.target == "item") {
      if (n.args.size() != 1 || !std::holds_alternative<ir::TensorRef>(n.args[0])) {
        v.fail("item takes one tensor argument");
      }
      expect_outputs(n, v, 1, false);
      if (!g_->value(n.outputs[0]).expr.is_symbol()) v.fail("item must produce a symbol");
      return;
    }
    if (control) {
      if (n.args.empty()) v.fail("{} needs arguments", n.target);
      const size_t operands = operand_count(n, v);
      if (n.target == "cond") {
        const ir::Argument& pred = n.args[0];
        if (!std::holds_alternative<ir::TensorRef>(pred) &&
            !std::holds_alternative<sym::Expr>(pred)) {
          v.get("args").at(0).fail("the cond predicate must be a tensor or an expression");
        }
        expect_subgraphs(n, v, 2, operands);
        for (const auto& s : n.subgraphs) {
          if (s->outputs.size() != n.outputs.size())
            v.fail("cond branches must return one value per output");
        }
      } else if (n.target == "map") {
        leading_count(n, v, operands, 1);
        expect_subgraphs(n, v, 1, operands);
        if (n.subgraphs[0]->outputs.size() != n.outputs.size())
          v.fail("map body must return one value per output");
      } else {
        const size_t carried = leading_count(n, v, operands, 0);
        expect_subgraphs(n, v, 2, operands);
        if (n.subgraphs[0]->outputs.size() != 1) v.fail("while_loop cond_fn must return one value");
        if (n.subgraphs[1]->outputs.size() != carried)
          v.fail("while_loop body_fn must return the {} carried values", carried);
        if (n.outputs.size() != carried) v.fail("while_loop has one output per carried value");
      }
      expect_outputs(n, v, n.outputs.size());
      return;
    }
    const OpDef* op = OpRegistry::instance().find(n.target);
    if (!op) {
      throw NotSupportedError(fmt::format(
          "[load] '{}': {}: op '{}' is not registered in this build of ingot; a custom op must be "
          "registered (its library loaded) before the program is loaded",
          v.origin(), v.path(), n.target));
    }
    if (op->is_inplace()) v.fail("in-place op {} cannot appear in a functional graph", n.target);
    const auto& params = op->schema.arguments;
    if (n.args.size() != params.size()) {
      v.get("args").fail("{} takes {} arguments ({}), got {}", n.target, params.size(),
                         op->schema.str(), n.args.size());
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (!matches(params[i].type, n.args[i])) {
        v.get("args").at(i).fail("argument '{}' of {} must be {}, got {}", params[i].name, n.target,
                                 params[i].type.str(), argument_kind_name(n.args[i]));
      }
    }
    expect_outputs(n, v, n.outputs.size());
  }

  const std::set<std::string>& known_;
  int depth_;
  std::shared_ptr<ir::Graph> g_;
  std::vector<bool> defined_;
};

}  // namespace

Json graph_to_json(const ir::Graph& g) {
  Json values = Json::array();
  for (size_t i = 0; i < g.num_values(); ++i)
    values.push_back(value_to_json(g.value(ir::ValueId(i))));
  Json nodes = Json::array();
  for (const ir::Node& n : g.nodes()) nodes.push_back(node_to_json(n));
  return Json{{"values", std::move(values)},
              {"inputs", g.inputs},
              {"outputs", g.outputs},
              {"nodes", std::move(nodes)}};
}

std::shared_ptr<ir::Graph> graph_from_json(const JsonView& v,
                                           const std::set<std::string>& known_symbols, int depth) {
  return GraphDecoder(known_symbols, depth).decode(v);
}

DType dtype_from_json(const JsonView& v) {
  const std::string& name = v.as_string();
  for (int i = 0; i <= int(DType::F64); ++i) {
    if (dtype_name(DType(i)) == name) return DType(i);
  }
  v.fail(
      "unknown dtype '{}' (expected bool, uint8, int8, int16, int32, int64, float16, bfloat16, "
      "float32, float64)",
      name);
}

}  // namespace ingot::archive
