#include "ingot/exporters/onnx/builder.h"

#include "ingot/core/version.h"

#include <cctype>

namespace ingot::exporters::onnx {

// --- attributes -----------------------------------------------------------------------

namespace {

AttributeProto make_attr(std::string name, AttributeProto::Value v) {
  AttributeProto a;
  a.name = std::move(name);
  a.value = std::move(v);
  return a;
}

}  // namespace

AttributeProto attr(std::string name, int64_t v) {
  return make_attr(std::move(name), v);
}
AttributeProto attr(std::string name, int v) {
  return make_attr(std::move(name), int64_t(v));
}
AttributeProto attr(std::string name, float v) {
  return make_attr(std::move(name), v);
}
AttributeProto attr(std::string name, double v) {
  return make_attr(std::move(name), float(v));
}
AttributeProto attr(std::string name, std::string v) {
  return make_attr(std::move(name), std::move(v));
}
AttributeProto attr(std::string name, const char* v) {
  return make_attr(std::move(name), std::string(v));
}
AttributeProto attr(std::string name, std::initializer_list<int64_t> v) {
  return make_attr(std::move(name), std::vector<int64_t>(v));
}
AttributeProto attr(std::string name, std::vector<int64_t> v) {
  return make_attr(std::move(name), std::move(v));
}
AttributeProto attr(std::string name, std::vector<float> v) {
  return make_attr(std::move(name), std::move(v));
}
AttributeProto attr(std::string name, std::vector<std::string> v) {
  return make_attr(std::move(name), std::move(v));
}
AttributeProto attr(std::string name, TensorProto v) {
  return make_attr(std::move(name), std::move(v));
}
AttributeProto attr(std::string name, GraphProto v) {
  return make_attr(std::move(name), Box<GraphProto>(std::move(v)));
}
AttributeProto attr(std::string name, std::vector<GraphProto> v) {
  return make_attr(std::move(name), std::move(v));
}

// --- NameScope ------------------------------------------------------------------------

std::string NameScope::fresh(std::string_view hint) {
  std::string base(hint.empty() ? std::string_view("v") : hint);
  if (names_.insert(base).second) return base;
  int64_t& next = next_suffix_[base];
  for (;;) {
    std::string candidate = fmt::format("{}_{}", base, ++next);
    if (names_.insert(candidate).second) return candidate;
  }
}

bool NameScope::claim(const std::string& name) {
  return names_.insert(name).second;
}

// --- GraphBuilder ---------------------------------------------------------------------

namespace {

ValueInfoProto value_info(const std::string& name, DataType type, Dims shape) {
  ValueInfoProto v;
  v.name = name;
  v.type = TensorType{type, std::move(shape)};
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string name)
    : GraphBuilder(std::move(name), std::make_shared<Names>(), nullptr) {}

GraphBuilder::GraphBuilder(std::string name, std::shared_ptr<Names> names,
                           const GraphBuilder* parent)
    : names_(std::move(names)), parent_(parent) {
  graph_.name = std::move(name);
}

bool GraphBuilder::is_visible(const std::string& value) const {
  for (const GraphBuilder* g = this; g != nullptr; g = g->parent_)
    if (g->defined_.count(value) != 0) return true;
  return false;
}

void GraphBuilder::check_visible(const std::string& value, std::string_view what) const {
  INGOT_CHECK(is_visible(value), ValueError,
              "[onnx.builder] graph '{}': {} '{}' is not defined in this graph or an enclosing "
              "one (add it as an input, initializer or node output first)",
              graph_.name, what, value);
}

std::string GraphBuilder::add_input(const std::string& name, DataType type, Dims shape) {
  INGOT_CHECK(!name.empty() && names_->values.claim(name), ValueError,
              "[onnx.builder] graph '{}': input name '{}' is empty or already used", graph_.name,
              name);
  graph_.input.push_back(value_info(name, type, std::move(shape)));
  define(name);
  return name;
}

std::string GraphBuilder::add_output(const std::string& value, DataType type, Dims shape,
                                     const std::string& name) {
  check_visible(value, "output value");
  std::string out = value;
  if (!name.empty() && name != value) {
    INGOT_CHECK(names_->values.claim(name), ValueError,
                "[onnx.builder] graph '{}': output name '{}' is already used", graph_.name, name);
    NodeProto n;
    n.op_type = "Identity";
    n.name = names_->nodes.fresh("Identity");
    n.input = {value};
    n.output = {name};
    graph_.node.push_back(std::move(n));
    define(name);
    out = name;
  }
  for (const auto& o : graph_.output) {
    INGOT_CHECK(o.name != out, ValueError, "[onnx.builder] graph '{}': '{}' is already an output",
                graph_.name, out);
  }
  graph_.output.push_back(value_info(out, type, std::move(shape)));
  return out;
}

void GraphBuilder::set_value_info(const std::string& value, DataType type, Dims shape) {
  check_visible(value, "value");
  graph_.value_info.push_back(value_info(value, type, std::move(shape)));
}

std::vector<std::string> GraphBuilder::add_node(std::string_view op_type,
                                                const std::vector<std::string>& inputs,
                                                const std::vector<std::string>& outputs,
                                                std::vector<AttributeProto> attrs,
                                                const NodeOptions& options) {
  INGOT_CHECK(!op_type.empty(), ValueError, "[onnx.builder] graph '{}': empty op type",
              graph_.name);
  for (const auto& in : inputs) {
    if (!in.empty()) check_visible(in, fmt::format("input of {}", op_type));
  }
  for (size_t i = 0; i < attrs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      INGOT_CHECK(attrs[i].name != attrs[j].name, ValueError,
                  "[onnx.builder] graph '{}': {} node has attribute '{}' twice", graph_.name,
                  op_type, attrs[i].name);
    }
  }
  NodeProto n;
  n.op_type = std::string(op_type);
  n.domain = options.domain;
  n.name = names_->nodes.fresh(options.name.empty() ? op_type : std::string_view(options.name));
  n.doc_string = options.doc_string;
  n.input = inputs;
  n.attribute = std::move(attrs);
  for (const auto& hint : outputs) {
    std::string name = fresh_name(hint.empty() ? lower(op_type) : hint);
    define(name);
    n.output.push_back(std::move(name));
  }
  std::vector<std::string> result = n.output;
  graph_.node.push_back(std::move(n));
  return result;
}

std::string GraphBuilder::add_op(std::string_view op_type, const std::vector<std::string>& inputs,
                                 std::vector<AttributeProto> attrs, std::string_view output_hint,
                                 const NodeOptions& options) {
  return add_node(op_type, inputs, {std::string(output_hint)}, std::move(attrs), options)[0];
}

std::string GraphBuilder::add_initializer(TensorProto t) {
  t.name = fresh_name(t.name.empty() ? std::string_view("init") : std::string_view(t.name));
  define(t.name);
  std::string name = t.name;
  graph_.initializer.push_back(std::move(t));
  return name;
}

std::string GraphBuilder::add_constant(TensorProto t, std::string_view hint) {
  t.name.clear();  // the value's name is the node output's
  return add_op("Constant", {}, {attr("value", std::move(t))}, hint);
}

std::string GraphBuilder::constant_ints(const std::vector<int64_t>& values, std::string_view hint) {
  return add_constant(values, {int64_t(values.size())}, hint);
}

GraphBuilder GraphBuilder::subgraph(std::string name) {
  return GraphBuilder(std::move(name), names_, this);
}

GraphProto GraphBuilder::build() {
  GraphProto out = std::move(graph_);
  graph_ = GraphProto();
  defined_.clear();
  return out;
}

// --- ModelBuilder ---------------------------------------------------------------------

ModelBuilder::ModelBuilder(std::string graph_name, int64_t opset)
    : opset_(opset), graph_(std::move(graph_name)) {
  ir_version_for_opset(opset);  // validates the range
  imports_.push_back({"", opset});
}

void ModelBuilder::import_opset(const std::string& domain, int64_t version) {
  for (const auto& o : imports_) {
    if (o.domain == domain) {
      INGOT_CHECK(o.version == version, ValueError,
                  "[onnx.builder] opset domain '{}' is imported at version {}, not {}", domain,
                  o.version, version);
      return;
    }
  }
  imports_.push_back({domain, version});
}

void ModelBuilder::add_metadata(std::string key, std::string value) {
  metadata_.push_back({std::move(key), std::move(value)});
}

ModelProto ModelBuilder::build() {
  ModelProto m;
  m.ir_version = ir_version_for_opset(opset_);
  m.producer_name = kProducerName;
  m.producer_version = ingot::version();
  m.doc_string = doc_;
  m.graph = graph_.build();
  m.opset_import = imports_;
  m.metadata_props = metadata_;
  return m;
}

}  // namespace ingot::exporters::onnx
