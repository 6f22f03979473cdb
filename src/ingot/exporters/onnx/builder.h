// Building ONNX graphs node by node: what the exporter's translations call.
//
//   ModelBuilder mb;                                   // opset 18, IR version 8
//   GraphBuilder& g = mb.graph();
//   auto x = g.add_input("x", DataType::Float, {{"batch", 4}});
//   auto w = g.add_initializer(make_tensor("w", weight));
//   auto y = g.add_op("MatMul", {x, w});
//   auto z = g.add_node("Split", {y}, {"lo", "hi"}, {attr("axis", 1), attr("num_outputs", 2)});
//   g.add_output(z[0], DataType::Float, {{"batch", 2}}, "logits");
//   ModelProto model = mb.build();
//
// Naming (docs/onnx.md): graph inputs and outputs keep the exact names given (a taken
// name is a ValueError); every other value gets its hint when free and hint_1, hint_2, ...
// otherwise. Names are unique across the main graph and all its subgraphs, as ONNX
// requires (a subgraph may not redefine an outer name). Node names are unique too.
//
// Invariants: nodes are appended in topological order: every input of add_node must
// already be visible (an input or initializer of this graph or of an enclosing one, or
// an earlier node's output), else ValueError naming it; "" marks an omitted optional
// input.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ingot/exporters/onnx/model.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/onnx/version.h"

namespace ingot::exporters::onnx {

// --- attributes -----------------------------------------------------------------------
AttributeProto attr(std::string name, int64_t v);
AttributeProto attr(std::string name, int v);
AttributeProto attr(std::string name, float v);
AttributeProto attr(std::string name, double v);  // stored as float, as ONNX does
AttributeProto attr(std::string name, std::string v);
AttributeProto attr(std::string name, const char* v);
AttributeProto attr(std::string name, std::initializer_list<int64_t> v);
AttributeProto attr(std::string name, std::vector<int64_t> v);
AttributeProto attr(std::string name, std::vector<float> v);
AttributeProto attr(std::string name, std::vector<std::string> v);
AttributeProto attr(std::string name, TensorProto v);
AttributeProto attr(std::string name, GraphProto v);
AttributeProto attr(std::string name, std::vector<GraphProto> v);

using Dims = std::optional<std::vector<Dim>>;  // nullopt: unknown rank

// Unique names within one model (shared by its graphs).
class NameScope {
 public:
  // `hint` when it is free, else the first free hint_1, hint_2, ...; the result is taken.
  std::string fresh(std::string_view hint);
  // Takes exactly `name`; false when it was already taken.
  bool claim(const std::string& name);
  bool taken(std::string_view name) const { return names_.count(std::string(name)) != 0; }

 private:
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, int64_t> next_suffix_;
};

// Optional properties of a node.
struct NodeOptions {
  std::string domain;      // "" is the default ONNX domain; e.g. "com.microsoft"
  std::string name;        // node-name hint (default: the op type)
  std::string doc_string;  // e.g. the user source line that produced the node
};

class GraphBuilder {
 public:
  // A top-level graph; ModelBuilder makes one.
  explicit GraphBuilder(std::string name);
  GraphBuilder(GraphBuilder&&) = default;

  // A graph input named exactly `name`.
  std::string add_input(const std::string& name, DataType type, Dims shape);
  // Makes `value` a graph output called `name` (default: its own name). When the names
  // differ an Identity node renames it. ValueError when `value` is not visible here or
  // `name` is taken.
  std::string add_output(const std::string& value, DataType type, Dims shape,
                         const std::string& name = "");
  // Records the type of an intermediate value (value_info), e.g. for readability or to
  // give a runtime a shape it cannot infer.
  void set_value_info(const std::string& value, DataType type, Dims shape);

  // Appends a node and returns its output names, one per entry of `outputs`, each made
  // unique from that hint ("" hints derive from the op type). Trailing optional outputs
  // are omitted by passing fewer hints.
  std::vector<std::string> add_node(std::string_view op_type,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    std::vector<AttributeProto> attrs = {},
                                    const NodeOptions& options = {});
  // A node with one output; returns its name.
  std::string add_op(std::string_view op_type, const std::vector<std::string>& inputs,
                     std::vector<AttributeProto> attrs = {}, std::string_view output_hint = "",
                     const NodeOptions& options = {});

  // Adds an initializer (weights, large constants) named t.name when free, else a
  // unique variant of it; returns the name used. The bytes are shared, not copied.
  std::string add_initializer(TensorProto t);
  // A Constant node whose `value` is t (small tensors: shape arithmetic, scalars).
  std::string add_constant(TensorProto t, std::string_view hint = "const");
  template <typename T>
  std::string add_constant(const std::vector<T>& values, const std::vector<int64_t>& dims,
                           std::string_view hint = "const") {
    return add_constant(make_tensor("", values, dims), hint);
  }
  // 1-D int64 constant (shapes, axes, starts/ends of Slice).
  std::string constant_ints(const std::vector<int64_t>& values, std::string_view hint = "const");

  // A subgraph (If branch, Loop/Scan body) that can read this graph's values and shares
  // its names. It refers to this builder, which must outlive it.
  GraphBuilder subgraph(std::string name);

  // A fresh unique value name.
  std::string fresh_name(std::string_view hint) { return names_->values.fresh(hint); }
  // Whether `value` can be used as an input here.
  bool is_visible(const std::string& value) const;

  const GraphProto& graph() const { return graph_; }
  // The finished graph (the builder is left empty).
  GraphProto build();

 private:
  struct Names {
    NameScope values;
    NameScope nodes;
  };
  GraphBuilder(std::string name, std::shared_ptr<Names> names, const GraphBuilder* parent);
  void define(const std::string& value) { defined_.insert(value); }
  void check_visible(const std::string& value, std::string_view what) const;

  GraphProto graph_;
  std::shared_ptr<Names> names_;
  const GraphBuilder* parent_ = nullptr;
  std::unordered_set<std::string> defined_;
};

// A model around one main graph.
class ModelBuilder {
 public:
  // producer "ingot" with the project version; IR version from ir_version_for_opset.
  explicit ModelBuilder(std::string graph_name = "main", int64_t opset = kDefaultOpset);

  GraphBuilder& graph() { return graph_; }
  int64_t opset() const { return opset_; }
  // Imports another operator set, e.g. ("com.microsoft", 1) for ONNX Runtime's
  // contrib ops. Re-importing a domain at another version is a ValueError.
  void import_opset(const std::string& domain, int64_t version);
  void add_metadata(std::string key, std::string value);
  void set_doc_string(std::string doc) { doc_ = std::move(doc); }

  // The finished model (the builder is left empty).
  ModelProto build();

 private:
  int64_t opset_;
  std::vector<OperatorSetId> imports_;
  std::vector<StringEntry> metadata_;
  std::string doc_;
  GraphBuilder graph_;
};

}  // namespace ingot::exporters::onnx
