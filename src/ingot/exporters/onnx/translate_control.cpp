// ONNX translations of the control-flow operators: cond -> If, map -> Loop with scan
// outputs, while_loop -> Loop with a condition (evaluated once before the loop and at the
// end of every iteration). Subgraphs read the enclosing graphs' values directly, as ONNX
// allows; symbols are shared with the enclosing graph.
#include <fmt/format.h>

#include "ingot/exporters/onnx/translation.h"

namespace ingot::exporters::onnx {

namespace {

// Unique names for loop-body inputs ("loop3.iter"): ingot value names have no dots.
std::string body_name(const char* what) {
  static int counter = 0;
  return fmt::format("loop{}.{}", counter++, what);
}

const std::vector<Dim> kScalar{};

// Adds `values` as outputs of `b` (each through an Identity, so an output is never an
// outer value), typed by the ingot graph's outputs.
void add_outputs(GraphBuilder& b, const ir::Graph& g, const std::vector<std::string>& values) {
  for (size_t k = 0; k < values.size(); ++k) {
    const ir::ValueInfo& info = g.value(g.outputs[k]);
    std::string out = b.add_op("Identity", {values[k]}, {}, "out");
    b.add_output(out, onnx_type(info.dtype), TranslationContext::dims(info));
  }
}

// The predicate argument as a one-element bool tensor.
std::string predicate(TranslationContext& cx) {
  if (const auto* e = std::get_if<sym::Expr>(&cx.node().args.at(0))) return cx.sym_bool1(*e);
  return cx.cast(cx.in(0), cx.in_dtype(0), DType::Bool);
}

// cond(pred, operands...) with subgraphs {true_fn, false_fn}.
void translate_cond(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  std::vector<std::string> operands;
  for (size_t i = 1; i < n.args.size(); ++i) operands.push_back(cx.in(i));
  std::string pred = predicate(cx);
  GraphBuilder then_b = cx.g().subgraph("then_branch");
  add_outputs(then_b, *n.subgraphs[0], cx.lower_graph(then_b, *n.subgraphs[0], operands));
  GraphBuilder else_b = cx.g().subgraph("else_branch");
  add_outputs(else_b, *n.subgraphs[1], cx.lower_graph(else_b, *n.subgraphs[1], operands));
  auto outs = cx.ops("If", {pred}, cx.num_outputs(),
                     {attr("then_branch", then_b.build()), attr("else_branch", else_b.build())});
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

// map(num_xs, xs..., args...) with subgraph {f}: f on slice k of every xs, stacked.
void translate_map(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  const size_t num_xs = size_t(cx.int_(0));
  std::vector<std::string> xs, args;
  for (size_t i = 1; i < n.args.size(); ++i) (i - 1 < num_xs ? xs : args).push_back(cx.in(i));
  std::string trips = cx.op("Gather", {cx.shape_of(xs.at(0)), cx.sym0(sym::integer(0))},
                            {attr("axis", int64_t(0))}, "trips");
  GraphBuilder body = cx.g().subgraph("map_body");
  std::string iter = body.add_input(body_name("iter"), DataType::Int64, kScalar);
  std::string cond_in = body.add_input(body_name("cond"), DataType::Bool, kScalar);
  std::vector<std::string> inputs;
  for (const std::string& x : xs)
    inputs.push_back(body.add_op("Gather", {x, iter}, {attr("axis", int64_t(0))}, "slice"));
  inputs.insert(inputs.end(), args.begin(), args.end());
  const ir::Graph& f = *n.subgraphs[0];
  std::vector<std::string> results = cx.lower_graph(body, f, inputs);
  body.add_output(body.add_op("Identity", {cond_in}, {}, "cond_out"), DataType::Bool, kScalar);
  add_outputs(body, f, results);
  auto outs = cx.ops("Loop", {trips, ""}, cx.num_outputs(), {attr("body", body.build())});
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

// while_loop(num_carried, carried..., additional...) with subgraphs {cond_fn, body_fn}.
void translate_while_loop(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  const size_t num_carried = size_t(cx.int_(0));
  std::vector<std::string> carried, additional;
  for (size_t i = 1; i < n.args.size(); ++i)
    (i - 1 < num_carried ? carried : additional).push_back(cx.in(i));
  const ir::Graph& cond_g = *n.subgraphs[0];
  const ir::Graph& body_g = *n.subgraphs[1];
  auto with_additional = [&](std::vector<std::string> v) {
    v.insert(v.end(), additional.begin(), additional.end());
    return v;
  };
  auto as_bool = [&](GraphBuilder& b, const std::string& v, DType dtype) {
    return dtype == DType::Bool ? v : b.add_op("Cast", {v}, {attr("to", int64_t(DataType::Bool))});
  };
  const DType cond_dtype = cond_g.value(cond_g.outputs.at(0)).dtype;
  // The first test, inline in the enclosing graph.
  std::string first =
      as_bool(cx.g(), cx.lower_graph(cx.g(), cond_g, with_additional(carried)).at(0), cond_dtype);
  GraphBuilder body = cx.g().subgraph("while_body");
  body.add_input(body_name("iter"), DataType::Int64, kScalar);
  body.add_input(body_name("cond"), DataType::Bool, kScalar);
  std::vector<std::string> carried_in;
  for (size_t k = 0; k < num_carried; ++k) {
    const ir::ValueInfo& info = body_g.value(body_g.inputs[k]);
    carried_in.push_back(body.add_input(body_name("carried"), onnx_type(info.dtype),
                                        TranslationContext::dims(info)));
  }
  std::vector<std::string> next = cx.lower_graph(body, body_g, with_additional(carried_in));
  std::string again =
      as_bool(body, cx.lower_graph(body, cond_g, with_additional(next)).at(0), cond_dtype);
  body.add_output(body.add_op("Identity", {again}, {}, "cond_out"), DataType::Bool, kScalar);
  add_outputs(body, body_g, next);
  std::vector<std::string> loop_inputs{"", first};
  loop_inputs.insert(loop_inputs.end(), carried.begin(), carried.end());
  auto outs = cx.ops("Loop", loop_inputs, cx.num_outputs(), {attr("body", body.build())});
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

}  // namespace

INGOT_ONNX_TRANSLATION(cond, "cond", translate_cond);
INGOT_ONNX_TRANSLATION(map, "map", translate_map);
INGOT_ONNX_TRANSLATION(while_loop, "while_loop", translate_while_loop);

}  // namespace ingot::exporters::onnx
