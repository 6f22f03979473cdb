// OpenVINO IR v11 in memory: a graph of layers (operations) whose output ports carry
// element types and shapes, connected by edges, built node by node by the translations
// and written by writer.h as model.xml + model.bin.
//
//   openvino::Graph g;
//   Value x = g.parameter("x", DType::F32, {-1, 8}, "1..4,8");
//   Value w = g.constant(weight);                     // shares the weight's storage
//   Value y = g.op("MatMul", {x, w}, {{"transpose_a", "false"}, {"transpose_b", "true"}});
//   g.result(y, "logits");
//
// Invariants: layers are appended in topological order (every input is an earlier
// layer's output in the same graph; subgraphs of If / Loop are separate Graphs whose
// outer values come in through Parameters and port maps). Each op type is written with
// the newest opset version the pinned runtime (openvino 2026.4) has for it
// (op_version()). Output element types follow the op's rule (infer_types()); shapes are
// recorded where the translation knows them (the ingot value's metadata) and left out
// elsewhere — OpenVINO re-infers every shape but the Parameters' when it reads a model.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::exporters::openvino {

// Output `port` (counted among the layer's outputs) of layer `layer` of one Graph.
struct Value {
  int32_t layer = -1;
  int32_t port = 0;
  bool valid() const { return layer >= 0; }
  bool operator==(const Value& o) const { return layer == o.layer && port == o.port; }
  bool operator<(const Value& o) const {
    return layer < o.layer || (layer == o.layer && port < o.port);
  }
};

// Element type and shape of an output port.
struct PortInfo {
  DType type = DType::F32;
  // nullopt: not recorded (written without <dim>s); -1 entries are dynamic dims.
  std::optional<std::vector<int64_t>> dims;
  std::vector<std::string> names;  // tensor names (input_ids, logits, ...)
};

using Attributes = std::vector<std::pair<std::string, std::string>>;

class Graph;

struct Layer {
  std::string name;
  std::string type;     // "MatMul", "Parameter", "Const", ...
  std::string version;  // "opset1", "opset8", ...
  Attributes attrs;     // the <data .../> element, in order
  std::vector<Value> inputs;
  std::vector<PortInfo> outputs;
  Tensor data;         // Const: the payload (shared, not copied)
  std::string source;  // the user's source line, for readers of the in-memory IR (not written)
  Attributes rt_info;  // extra rt_info entries, e.g. {"decompression", ""}
  // If: {"then_body", g}, {"else_body", g}; Loop: {"body", g}.
  std::vector<std::pair<std::string, std::shared_ptr<Graph>>> bodies;
  // Raw <port_map> / <back_edges> children (If / Loop); ids refer to body layers.
  std::string port_map_xml;
};

// The element type names of the IR ("f32", "boolean", ...) and of its ports ("FP32", "BOOL").
std::string_view element_type_name(DType t);
std::string_view precision_name(DType t);
// The dtype of an element type name (ValueError for names ingot has no dtype for).
DType dtype_of_element_type(std::string_view name);
// "opsetN" of the newest version of `type` in the pinned runtime; InternalError for an op
// type the table does not list (add it with the version the runtime documents).
std::string_view op_version(std::string_view type);

class Graph {
 public:
  // A Parameter named exactly `name` (tensor name too). `dims` are the port dims (-1
  // dynamic); `shape` the partial shape attribute ("1..4,?,8"); empty = from dims.
  Value parameter(const std::string& name, DType type, const std::vector<int64_t>& dims,
                  std::string shape = "");
  // A Const holding t's elements (a contiguous tensor's storage is shared).
  Value constant(const Tensor& t, std::string_view hint = "Constant");
  // 1-D i64 / 0-d constants.
  Value ints(const std::vector<int64_t>& values);
  Value scalar(double value, DType type);

  // An op with `num_outputs` outputs whose element types follow infer_types().
  std::vector<Value> ops(std::string_view type, const std::vector<Value>& inputs,
                         size_t num_outputs, Attributes attrs = {}, std::string source = "");
  Value op(std::string_view type, const std::vector<Value>& inputs, Attributes attrs = {},
           std::string source = "");
  // A layer of any type with explicit output types (ReadValue, If, Loop, ...).
  std::vector<Value> add_layer(std::string_view type, const std::vector<Value>& inputs,
                               std::vector<PortInfo> outputs, Attributes attrs = {},
                               std::string source = "");
  // A Result reading `v`; its tensor gets `name` (the model output's name).
  int32_t result(Value v, const std::string& name);
  // An Assign (a sink: no outputs are read) writing `v` to `variable_id`.
  int32_t assign(Value v, const std::string& variable_id);

  const PortInfo& info(Value v) const;
  PortInfo& info(Value v);
  DType type(Value v) const { return info(v).type; }

  const std::vector<Layer>& layers() const { return layers_; }
  std::vector<Layer>& layers() { return layers_; }
  Layer& layer(int32_t id) { return layers_.at(size_t(id)); }
  // Parameter and Result layer ids, in order.
  const std::vector<int32_t>& parameters() const { return parameters_; }
  const std::vector<int32_t>& results() const { return results_; }
  // After a pass rebuilt layers(): old layer id -> new id for the Parameter / Result lists.
  void remap_ids(const std::vector<int32_t>& remap);

 private:
  int32_t append(Layer l);
  std::vector<DType> infer_types(std::string_view type, const std::vector<Value>& inputs,
                                 const Attributes& attrs, size_t num_outputs) const;
  std::string fresh_name(std::string_view hint);

  std::vector<Layer> layers_;
  std::vector<int32_t> parameters_, results_;
  std::map<std::string, int64_t, std::less<>> name_counts_;
};

// The model: a graph plus model-level rt_info.
struct Model {
  std::string name = "ingot";
  Graph graph;
  Attributes rt_info;  // <rt_info><info name=.. value=../></rt_info>
};

}  // namespace ingot::exporters::openvino
