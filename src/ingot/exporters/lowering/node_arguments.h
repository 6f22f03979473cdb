// Reading one traced node's arguments by schema position: what every backend's
// translation table needs before it emits anything (the ONNX and OpenVINO
// TranslationContexts derive from it and add their emitting half).
//
//   int64_t dim = cx.int_(1);                  // static int, or unsupported()
//   std::vector<sym::Expr> sizes = cx.exprs(1);   // SymInt[]: may be symbolic
//   std::optional<double> alpha = cx.opt_f64(2);  // None -> nullopt
//
// Integer arguments may be symbolic (sym::Expr over the program's symbols); the static
// readers (int_, ints) call unsupported() when they meet a symbol, which the backend
// turns into a NotSupportedError naming the op, the user's source line and what to do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ingot/ir/graph.h"

namespace ingot::exporters::lowering {

class NodeArguments {
 public:
  // `backend` ("onnx") labels the internal errors of a malformed node.
  NodeArguments(const char* backend, const ir::Graph& graph, const ir::Node& node)
      : backend_(backend), graph_(graph), node_(node) {}
  virtual ~NodeArguments() = default;

  const ir::Node& node() const { return node_; }
  const ir::Graph& graph() const { return graph_; }

  // --- arguments ---------------------------------------------------------------------
  size_t num_args() const { return node_.args.size(); }
  // Argument i is absent or None.
  bool is_none(size_t i) const;
  // Tensor argument i's dtype and sizes.
  const ir::ValueInfo& in_info(size_t i) const;
  DType in_dtype(size_t i) const { return in_info(i).dtype; }
  size_t in_rank(size_t i) const { return in_info(i).sizes.size(); }
  // Tensor[] / Tensor?[] argument i: the metadata of each entry (nullptr for None).
  std::vector<const ir::ValueInfo*> in_list_info(size_t i) const;
  // int / SymInt arguments (a Scalar or bool reads as its integer).
  sym::Expr expr(size_t i) const;
  std::optional<sym::Expr> opt_expr(size_t i) const;
  // A static int argument (unsupported() when symbolic).
  int64_t int_(size_t i) const;
  // int[] / SymInt[] arguments (a single int reads as a one-entry list).
  std::vector<sym::Expr> exprs(size_t i) const;
  std::vector<int64_t> ints(size_t i) const;
  std::optional<std::vector<int64_t>> opt_ints(size_t i) const;
  double f64(size_t i) const;
  std::optional<double> opt_f64(size_t i) const;
  bool boolean(size_t i) const;
  std::optional<bool> opt_bool(size_t i) const;
  std::optional<DType> opt_dtype(size_t i) const;
  std::optional<std::string> opt_str(size_t i) const;
  // The numeric value of a constant Scalar argument (nullopt when symbolic / None).
  std::optional<double> scalar_value(size_t i) const;

  // --- outputs -------------------------------------------------------------------------
  size_t num_outputs() const { return node_.outputs.size(); }
  const ir::ValueInfo& out_info(size_t i = 0) const;
  DType out_dtype(size_t i = 0) const { return out_info(i).dtype; }
  size_t out_rank(size_t i = 0) const { return out_info(i).sizes.size(); }

  // "model.cpp:42 in forward" of the node.
  std::string source() const { return node_.source.str(); }
  // NotSupportedError naming the op, the user's line, `what` and the backend's way out.
  [[noreturn]] virtual void unsupported(const std::string& what) const = 0;

 protected:
  const char* backend_;
  const ir::Graph& graph_;
  const ir::Node& node_;
};

}  // namespace ingot::exporters::lowering
