// ONNX translations: how one ingot op becomes ONNX nodes (the exporter's translation
// table, seed 004's _ONNX_TRANSLATION_TABLE).
//
// A translation reads the node's arguments through the TranslationContext, emits ONNX
// nodes with it and sets the ONNX value of each output:
//
//   void translate_neg(TranslationContext& cx) { cx.set_output(0, cx.op("Neg", {cx.in(0)})); }
//   INGOT_ONNX_TRANSLATION(neg, "neg", translate_neg);
//
// Integer arguments may be symbolic (sym::Expr over the program's symbols, e.g.
// `seq + 1`): sym0/sym1/shape_tensor lower them to Shape/Gather/arithmetic nodes reading
// an input that carries each symbol, or to constants when they are static. Every node a
// translation emits records the user's source line (doc_string).
//
// An op without a translation fails the export (NotSupportedError naming the op, the
// user's source line and how to register one); never a silently wrong graph.
#pragma once

#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/exporters/lowering/node_arguments.h"
#include "ingot/exporters/onnx/builder.h"
#include "ingot/ir/graph.h"

namespace ingot::exporters::onnx {

class Lowering;

// The node's arguments (NodeArguments) plus what emitting ONNX nodes needs.
class TranslationContext : public lowering::NodeArguments {
 public:
  TranslationContext(Lowering& lowering, const ir::Graph& graph, const ir::Node& node)
      : NodeArguments("onnx", graph, node), l_(lowering) {}

  GraphBuilder& g();
  int64_t opset() const;

  // --- arguments (by schema position) ------------------------------------------------
  // The ONNX value of tensor argument i.
  std::string in(size_t i) const;
  // Tensor[] / Tensor?[] arguments: ONNX values (nullopt for None entries) and metadata.
  std::vector<std::optional<std::string>> in_list(size_t i) const;
  // A Scalar argument (a number, or a symbolic size traced into a Scalar slot) as a 0-d
  // ONNX tensor of `dtype`.
  std::string scalar(size_t i, DType dtype);

  // --- outputs -------------------------------------------------------------------------
  void set_output(size_t i, const std::string& onnx_value);
  std::string hint(size_t i = 0) const;

  // --- emitting --------------------------------------------------------------------------
  // One node (its doc_string names the user's source line); returns its output(s).
  std::string op(std::string_view type, const std::vector<std::string>& inputs,
                 std::vector<AttributeProto> attrs = {}, std::string_view hint = "");
  std::vector<std::string> ops(std::string_view type, const std::vector<std::string>& inputs,
                               size_t num_outputs, std::vector<AttributeProto> attrs = {},
                               std::string_view hint = "");
  // A Constant holding `t` (small tensors).
  std::string constant(const Tensor& t, std::string_view hint = "const");
  // 0-d constant of `dtype`.
  std::string scalar_const(double value, DType dtype);
  // 1-D int64 constant.
  std::string ints_const(const std::vector<int64_t>& values);
  // `value` (of dtype `from`) as `to`; the value itself when they are equal.
  std::string cast(const std::string& value, DType from, DType to);
  // Shape(value) (1-D int64).
  std::string shape_of(const std::string& value);

  // --- symbolic integers -----------------------------------------------------------------
  // expr as an int64 tensor of shape [1] / shape [] (constants when static).
  std::string sym1(const sym::Expr& e);
  std::string sym0(const sym::Expr& e);
  // A 1-D int64 tensor of sizes (a Constant when every entry is static).
  std::string shape_tensor(const std::vector<sym::Expr>& sizes);
  // A bool [1] tensor of a boolean expression.
  std::string sym_bool1(const sym::Expr& e);
  // Binds an unbacked symbol to an int64 [1] value (what `item` does).
  void bind_symbol(const std::string& name, const std::string& value1d);

  // --- control flow ----------------------------------------------------------------------
  // Lowers the ingot graph `sub` into builder `b` with its inputs bound to the ONNX values
  // `inputs`; returns the ONNX values of its outputs. `b` is g() to inline a graph, or a
  // subgraph made with g().subgraph(...) (If branches, Loop bodies), which may read every
  // value of the enclosing graphs.
  std::vector<std::string> lower_graph(GraphBuilder& b, const ir::Graph& sub,
                                       const std::vector<std::string>& inputs);
  // ONNX shape of a value: static sizes as dim_value, symbols as dim_param.
  static Dims dims(const ir::ValueInfo& v);

  // NotSupportedError naming the op, the user's line and `what`.
  [[noreturn]] void unsupported(const std::string& what) const override;

  Lowering& lowering() { return l_; }

 private:
  Lowering& l_;
};

using Translation = std::function<void(TranslationContext&)>;

// Registers `fn` for the op `op` (qualified name). A second registration for the same op
// is an InternalError.
void register_translation(const std::string& op, Translation fn,
                          std::source_location where = std::source_location::current());
const Translation* find_translation(std::string_view op);
std::vector<std::string> translated_ops();

// ONNX element type of an ingot dtype.
DataType onnx_type(DType t);

}  // namespace ingot::exporters::onnx

#define INGOT_ONNX_TRANSLATION(id, op, ...)                          \
  static const bool kOnnxTranslation_##id = [] {                     \
    ::ingot::exporters::onnx::register_translation(op, __VA_ARGS__); \
    return true;                                                     \
  }()
