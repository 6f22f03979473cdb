// The graph IR of an exported program: a functional SSA graph of registry ops.
//
// A Graph holds values and nodes. Every value is produced once (by a graph input or a
// node) and is either a tensor (with dtype and symbolic sizes) or a symbolic integer
// (the result of item(): an unbacked symbol). Nodes call an op of the registry by its
// qualified name ("add.Tensor", "mylib::sin"), or a control-flow operator ("cond",
// "map", "while_loop") that owns subgraphs, or a runtime assert.
//
// Integer arguments are expressions over the program's symbols (sym::Expr): a size
// marked dynamic travels as "s0" or "s0 + 1", a static one as a constant. The runtime
// binds symbols from the input shapes (and unbacked ones from the values that produce
// them) and evaluates the expressions; there are no sym_size nodes.
//
// Invariants (checked by verify()): values are produced before use, in node order;
// every op is registered; a node's output metadata is what the op's shape function
// computes from its inputs' metadata.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ingot/core/dtype.h"
#include "ingot/ops/scalar.h"
#include "ingot/ops/value.h"
#include "ingot/sym/expr.h"

namespace ingot::ir {

using ValueId = int;
using SymShape = std::vector<sym::Expr>;

// What a value is: a tensor with dtype and symbolic sizes, or a symbolic integer.
struct ValueInfo {
  enum class Kind { Tensor, SymInt };
  Kind kind = Kind::Tensor;
  std::string name;  // unique in the graph: "x", "add_1", "p_linear_weight"
  DType dtype = DType::F32;
  SymShape sizes;  // tensors
  sym::Expr expr;  // SymInt values: the (unbacked) symbol they bind
  bool is_tensor() const { return kind == Kind::Tensor; }
};

// A list of tensors where some entries may be None (`Tensor?[]` indices).
using OptionalValueList = std::vector<std::optional<ValueId>>;

// One argument of a node, by the op schema's kinds (None = absent optional).
struct TensorRef {
  ValueId id = -1;
};
using Argument = std::variant<std::monostate, TensorRef, OptionalValueList, sym::Expr,
                              std::vector<sym::Expr>, double, bool, Scalar, DType, std::string>;

// Where the user's code asked for a node: file (basename kept as given), line, function.
struct SourceLine {
  std::string file;
  uint32_t line = 0;
  std::string function;
  static SourceLine from(const std::source_location& where);
  bool known() const { return line != 0; }
  std::string str() const;  // "model.cpp:42 in forward"
};

class Graph;

struct Node {
  std::string target;  // registry op name, or "cond" / "map" / "while_loop" / "assert"
  std::vector<Argument> args;
  std::vector<ValueId> outputs;
  std::vector<std::shared_ptr<Graph>> subgraphs;  // cond: {true, false}; map: {f};
                                                  // while_loop: {cond, body}
  SourceLine source;
  // "assert" nodes: the condition that must hold (an expression over symbols).
  std::optional<sym::Expr> condition;
  std::string message;  // "assert": what to tell the user when it fails
};

class Graph {
 public:
  // New values; names are made unique ("add", "add_1", ...).
  ValueId add_tensor_value(const std::string& name_hint, DType dtype, SymShape sizes);
  ValueId add_sym_value(const std::string& name_hint, sym::Expr expr);

  const ValueInfo& value(ValueId id) const { return values_.at(size_t(id)); }
  ValueInfo& mutable_value(ValueId id) { return values_.at(size_t(id)); }
  size_t num_values() const { return values_.size(); }

  Node& add_node(Node node);
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& mutable_nodes() { return nodes_; }

  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  // The values each node reads (tensor arguments), in argument order.
  static std::vector<ValueId> node_inputs(const Node& n);
  std::string unique_name(const std::string& hint);

  // Readable listing: one line per node with output metadata and the user's line.
  std::string print(const std::string& indent = "    ") const;

 private:
  std::vector<ValueInfo> values_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, int> name_counts_;
};

// A node argument as an op call Value: tensors through `tensor_of`, integer expressions
// through `int_of` (a plain int when running, a SymInt when re-tracing or verifying).
Value argument_to_value(const Argument& a, const std::function<Tensor(ValueId)>& tensor_of,
                        const std::function<SymInt(const sym::Expr&)>& int_of);

// "f32[s0, 8]" for a tensor value, "u0" for a symbolic integer.
std::string meta_str(const ValueInfo& v);
std::string argument_str(const Graph& g, const Argument& a);

}  // namespace ingot::ir
