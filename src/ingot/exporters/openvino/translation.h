// OpenVINO translations: how one ingot op becomes OpenVINO operations (the OpenVINO
// exporter's translation table, seed 004's translation registry for this backend).
//
//   void translate_neg(TranslationContext& cx) { cx.set_output(0, cx.op("Negative", {cx.in(0)})); }
//   INGOT_OPENVINO_TRANSLATION(neg, "neg", translate_neg);
//
// A translation reads the node's arguments through the context, emits operations with
// op(...) (element types follow the op; attributes as strings, as the IR writes them)
// and sets every output with set_output, which records the ingot value's element type
// and shape on the port (dynamic dims -1) and checks the element type. Symbolic integer
// arguments (sym::Expr over the program's symbols, e.g. `seq + 1`) become i64 values with
// sym1 / sym0 / shape_tensor: ShapeOf + Gather of a value that carries each symbol, then
// arithmetic, or constants when static.
//
// An op without a translation fails the export (NotSupportedError naming the op, the
// user's source line and how to register one); a translation that meets a case it cannot
// express calls unsupported(): never a silently wrong graph.
#pragma once

#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/exporters/lowering/node_arguments.h"
#include "ingot/exporters/openvino/ir.h"
#include "ingot/ir/graph.h"

namespace ingot::exporters::openvino {

class Lowering;

// The node's arguments (NodeArguments) plus what emitting OpenVINO operations needs.
class TranslationContext : public lowering::NodeArguments {
 public:
  TranslationContext(Lowering& lowering, const ir::Graph& graph, const ir::Node& node)
      : NodeArguments("openvino", graph, node), l_(lowering) {}

  Graph& g();

  // --- arguments (by schema position) ------------------------------------------------
  Value in(size_t i);
  // Tensor argument i as `dtype` (a Convert when it differs).
  Value as(size_t i, DType dtype) { return cast(in(i), in_dtype(i), dtype); }
  std::vector<std::optional<Value>> in_list(size_t i);
  // A Scalar argument as a 0-d value of `dtype` (constant, or a symbolic size).
  Value scalar(size_t i, DType dtype);

  // --- outputs -------------------------------------------------------------------------
  void set_output(size_t i, Value v);

  // --- emitting ----------------------------------------------------------------------
  Value op(std::string_view type, const std::vector<Value>& inputs, Attributes attrs = {});
  std::vector<Value> ops(std::string_view type, const std::vector<Value>& inputs, size_t n,
                         Attributes attrs = {});
  Value constant(const Tensor& t) { return g().constant(t); }
  Value scalar_const(double value, DType dtype) { return g().scalar(value, dtype); }
  Value ints_const(const std::vector<int64_t>& values) { return g().ints(values); }
  Value cast(Value v, DType from, DType to);
  Value shape_of(Value v);
  // Binary ops with numpy broadcasting.
  Value binary(std::string_view type, Value a, Value b);

  // --- symbolic integers ---------------------------------------------------------------
  Value sym1(const sym::Expr& e);  // i64 [1]
  Value sym0(const sym::Expr& e);  // i64 []
  Value shape_tensor(const std::vector<sym::Expr>& sizes);
  Value sym_bool1(const sym::Expr& e);  // boolean [1]
  void bind_symbol(const std::string& name, Value value1d);

  // --- control flow --------------------------------------------------------------------
  Lowering& lowering() { return l_; }

  [[noreturn]] void unsupported(const std::string& what) const override;

 private:
  Lowering& l_;
};

using Translation = std::function<void(TranslationContext&)>;

void register_translation(const std::string& op, Translation fn,
                          std::source_location where = std::source_location::current());
const Translation* find_translation(std::string_view op);
std::vector<std::string> translated_ops();

// Port dims of ingot metadata: static sizes, -1 for symbolic ones.
std::vector<int64_t> port_dims(const ir::ValueInfo& v);

}  // namespace ingot::exporters::openvino

#define INGOT_OPENVINO_TRANSLATION(id, op, ...)                          \
  static const bool kOpenVINOTranslation_##id = [] {                     \
    ::ingot::exporters::openvino::register_translation(op, __VA_ARGS__); \
    return true;                                                         \
  }()
