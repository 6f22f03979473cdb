// OpenVINO translations of the control-flow operators: cond -> If-8 (one body per
// branch), map -> Loop-5 slicing the mapped inputs along axis 0 and concatenating the
// results, while_loop -> Loop-5 with the carried values as merged inputs (back edges) and
// the condition evaluated once before the loop and at the end of every iteration.
//
// A body is a separate graph: its inputs are Parameters bound to the op's inputs by the
// port map. Values of the enclosing graph a body also reads (symbolic sizes it computes
// from outer inputs) are captured by the lowering as extra Parameters and become extra
// inputs of the op, mapped in the port map like the others.
#include <fmt/format.h>

#include <memory>

#include "ingot/exporters/openvino/lowering.h"
#include "ingot/exporters/openvino/translation.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

namespace {

// A body Parameter for ingot subgraph input `info`.
Value body_param(Graph& body, const ir::ValueInfo& info, const std::string& name) {
  return body.parameter(name, info.dtype, port_dims(info));
}

// Results of `values` in `body`, typed by the ingot graph's outputs; returns their ids.
std::vector<int32_t> body_results(Graph& body, const ir::Graph& g, const std::vector<Value>& values,
                                  const std::string& prefix) {
  std::vector<int32_t> ids;
  for (size_t k = 0; k < values.size(); ++k) {
    body.info(values[k]).dims = port_dims(g.value(g.outputs[k]));
    ids.push_back(body.result(values[k], fmt::format("{}{}", prefix, k)));
  }
  return ids;
}

// The predicate argument as a boolean [1].
Value predicate(TranslationContext& cx) {
  if (const auto* e = std::get_if<sym::Expr>(&cx.node().args.at(0))) return cx.sym_bool1(*e);
  return cx.as(0, DType::Bool);
}

// cond(pred, operands...) with subgraphs {true_fn, false_fn}.
void translate_cond(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  std::vector<Value> inputs{predicate(cx)};
  for (size_t i = 1; i < n.args.size(); ++i) inputs.push_back(cx.in(i));
  std::string port_map;
  std::vector<std::pair<std::string, std::shared_ptr<Graph>>> bodies;
  for (size_t b = 0; b < 2; ++b) {
    const char* name = b == 0 ? "then" : "else";
    const ir::Graph& sub = *n.subgraphs[b];
    auto body = std::make_shared<Graph>();
    std::vector<Value> params;
    std::string map = fmt::format("\t\t\t<{}_port_map>\n", name);
    for (size_t i = 0; i < sub.inputs.size(); ++i) {
      params.push_back(
          body_param(*body, sub.value(sub.inputs[i]), fmt::format("{}_in{}", name, i)));
      map += fmt::format("\t\t\t\t<input external_port_id=\"{}\" internal_layer_id=\"{}\" />\n",
                         i + 1, params.back().layer);
    }
    std::vector<std::pair<Value, Value>> captures;
    std::vector<Value> outs = cx.lowering().lower_body(*body, sub, params, captures);
    for (const auto& [outer, param] : captures) {
      map += fmt::format("\t\t\t\t<input external_port_id=\"{}\" internal_layer_id=\"{}\" />\n",
                         inputs.size(), param.layer);
      inputs.push_back(outer);
    }
    std::vector<int32_t> results = body_results(*body, sub, outs, fmt::format("{}_out", name));
    for (size_t k = 0; k < results.size(); ++k)
      map +=
          fmt::format("\t\t\t\t<output external_port_id=\"@OUT{}@\" internal_layer_id=\"{}\" />\n",
                      k, results[k]);
    port_map += map + fmt::format("\t\t\t</{}_port_map>\n", name);
    bodies.emplace_back(fmt::format("{}_body", name), body);
  }
  // Output port ids follow the inputs, whose number is known only now.
  for (size_t k = 0; k < cx.num_outputs(); ++k) {
    const std::string key = fmt::format("@OUT{}@", k), id = std::to_string(inputs.size() + k);
    for (size_t at; (at = port_map.find(key)) != std::string::npos;)
      port_map.replace(at, key.size(), id);
  }
  std::vector<PortInfo> outputs;
  for (size_t k = 0; k < cx.num_outputs(); ++k)
    outputs.push_back(PortInfo{cx.out_dtype(k), {}, {}});
  std::vector<Value> outs = cx.g().add_layer("If", inputs, std::move(outputs), {}, cx.source());
  Layer& l = cx.g().layer(outs[0].layer);
  l.bodies = std::move(bodies);
  l.port_map_xml = port_map;
  for (size_t k = 0; k < outs.size(); ++k) cx.set_output(k, outs[k]);
}

// The Loop layer: inputs (trip count, condition, then `inputs`), port map, back edges.
std::vector<Value> add_loop(TranslationContext& cx, Value trips, Value condition,
                            std::vector<Value> inputs, std::shared_ptr<Graph> body,
                            std::string port_map, const std::string& back_edges) {
  inputs.insert(inputs.begin(), {trips, condition});
  std::vector<PortInfo> outputs;
  for (size_t k = 0; k < cx.num_outputs(); ++k)
    outputs.push_back(PortInfo{cx.out_dtype(k), {}, {}});
  for (size_t k = 0; k < cx.num_outputs(); ++k) {
    const std::string key = fmt::format("@OUT{}@", k), id = std::to_string(inputs.size() + k);
    for (size_t at; (at = port_map.find(key)) != std::string::npos;)
      port_map.replace(at, key.size(), id);
  }
  std::vector<Value> outs = cx.g().add_layer("Loop", inputs, std::move(outputs), {}, cx.source());
  Layer& l = cx.g().layer(outs[0].layer);
  l.bodies = {{"body", std::move(body)}};
  l.port_map_xml = "\t\t\t<port_map>\n" + port_map + "\t\t\t</port_map>\n" + back_edges;
  return outs;
}

std::string input_entry(size_t external, int32_t internal, bool sliced = false) {
  return sliced
             ? fmt::format(
                   "\t\t\t\t<input axis=\"0\" external_port_id=\"{}\" internal_layer_id=\"{}\" "
                   "start=\"0\" end=\"-1\" stride=\"1\" part_size=\"1\" />\n",
                   external, internal)
             : fmt::format("\t\t\t\t<input external_port_id=\"{}\" internal_layer_id=\"{}\" />\n",
                           external, internal);
}

// map(num_xs, xs..., args...) with subgraph {f}: f on slice k of every xs, stacked.
void translate_map(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  const size_t num_xs = size_t(cx.int_(0));
  const ir::Graph& f = *n.subgraphs[0];
  auto body = std::make_shared<Graph>();
  std::vector<Value> inputs, params;
  std::string map;
  for (size_t i = 1; i < n.args.size(); ++i) {
    const ir::ValueInfo& info = f.value(f.inputs[i - 1]);
    const bool sliced = i - 1 < num_xs;
    Value p;
    if (sliced) {  // the body sees [1, ...] and squeezes it
      std::vector<int64_t> dims = port_dims(info);
      dims.insert(dims.begin(), 1);
      p = body->parameter(fmt::format("map_x{}", i), info.dtype, dims);
      map += input_entry(inputs.size() + 2, p.layer, true);
      params.push_back(body->op("Squeeze", {p, body->ints({0})}));
    } else {
      p = body_param(*body, info, fmt::format("map_arg{}", i));
      map += input_entry(inputs.size() + 2, p.layer);
      params.push_back(p);
    }
    inputs.push_back(cx.in(i));
  }
  std::vector<std::pair<Value, Value>> captures;
  std::vector<Value> outs = cx.lowering().lower_body(*body, f, params, captures);
  for (const auto& [outer, param] : captures) {
    map += input_entry(inputs.size() + 2, param.layer);
    inputs.push_back(outer);
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    std::vector<int64_t> dims = port_dims(f.value(f.outputs[k]));
    Value stacked = body->op("Unsqueeze", {outs[k], body->ints({0})});
    dims.insert(dims.begin(), 1);
    body->info(stacked).dims = dims;
    const int32_t r = body->result(stacked, fmt::format("map_out{}", k));
    map += fmt::format(
        "\t\t\t\t<output axis=\"0\" external_port_id=\"@OUT{}@\" internal_layer_id=\"{}\" "
        "start=\"0\" end=\"-1\" stride=\"1\" part_size=\"1\" />\n",
        k, r);
  }
  const int32_t again =
      body->result(body->constant(full({}, Scalar(true), DType::Bool)), "map_cond");
  map += fmt::format(
      "\t\t\t\t<output external_port_id=\"-1\" internal_layer_id=\"{}\" "
      "purpose=\"execution_condition\" />\n",
      again);
  Value shape = cx.shape_of(cx.in(1));
  Value trips = cx.op("Gather", {shape, cx.constant(Tensor::scalar(int64_t(0))),
                                 cx.constant(Tensor::scalar(int64_t(0)))});
  Value yes = cx.constant(full({}, Scalar(true), DType::Bool));
  auto results = add_loop(cx, trips, yes, inputs, body, map, "");
  for (size_t k = 0; k < results.size(); ++k) cx.set_output(k, results[k]);
}

// while_loop(num_carried, carried..., additional...) with subgraphs {cond_fn, body_fn}.
void translate_while_loop(TranslationContext& cx) {
  const ir::Node& n = cx.node();
  const size_t num_carried = size_t(cx.int_(0));
  const ir::Graph& cond_g = *n.subgraphs[0];
  const ir::Graph& body_g = *n.subgraphs[1];
  std::vector<Value> carried, additional;
  for (size_t i = 1; i < n.args.size(); ++i)
    (i - 1 < num_carried ? carried : additional).push_back(cx.in(i));
  // The first test: cond_fn inlined in the enclosing graph.
  std::vector<Value> first_inputs = carried;
  first_inputs.insert(first_inputs.end(), additional.begin(), additional.end());
  Value first = cx.lowering().lower_inline(cond_g, first_inputs).at(0);
  if (cx.g().type(first) != DType::Bool)
    first = cx.op("Convert", {first}, {{"destination_type", "boolean"}});

  // The loop body: body_fn on the carried values, then cond_fn on the new ones.
  auto body = std::make_shared<Graph>();
  std::string map;
  std::vector<Value> loop_inputs, carried_params, additional_params;
  for (size_t k = 0; k < num_carried; ++k) {
    Value p = body_param(*body, body_g.value(body_g.inputs[k]), fmt::format("carried{}", k));
    map += input_entry(loop_inputs.size() + 2, p.layer);
    loop_inputs.push_back(carried[k]);
    carried_params.push_back(p);
  }
  for (size_t k = 0; k < additional.size(); ++k) {
    Value p =
        body_param(*body, body_g.value(body_g.inputs[num_carried + k]), fmt::format("extra{}", k));
    map += input_entry(loop_inputs.size() + 2, p.layer);
    loop_inputs.push_back(additional[k]);
    additional_params.push_back(p);
  }
  std::vector<Value> body_in = carried_params;
  body_in.insert(body_in.end(), additional_params.begin(), additional_params.end());
  std::vector<std::pair<Value, Value>> captures;
  // body_fn then cond_fn in one graph: cond_fn's inputs are the new carried values.
  std::vector<Value> next = cx.lowering().lower_body(*body, body_g, body_in, captures);
  std::vector<Value> cond_in = next;
  cond_in.insert(cond_in.end(), additional_params.begin(), additional_params.end());
  // lower_body makes a fresh scope over the same body graph, so the second call shares
  // `body` and its captures are merged below.
  std::vector<std::pair<Value, Value>> cond_captures;
  Value again = cx.lowering().lower_body(*body, cond_g, cond_in, cond_captures)[0];
  if (body->type(again) != DType::Bool)
    again = body->op("Convert", {again}, {{"destination_type", "boolean"}});
  captures.insert(captures.end(), cond_captures.begin(), cond_captures.end());
  for (const auto& [outer, param] : captures) {
    map += input_entry(loop_inputs.size() + 2, param.layer);
    loop_inputs.push_back(outer);
  }
  std::string back_edges = "\t\t\t<back_edges>\n";
  std::vector<int32_t> results = body_results(*body, body_g, next, "carried_out");
  for (size_t k = 0; k < results.size(); ++k) {
    map += fmt::format("\t\t\t\t<output external_port_id=\"@OUT{}@\" internal_layer_id=\"{}\" />\n",
                       k, results[k]);
    back_edges += fmt::format("\t\t\t\t<edge from-layer=\"{}\" to-layer=\"{}\" />\n", results[k],
                              carried_params[k].layer);
  }
  back_edges += "\t\t\t</back_edges>\n";
  body->info(again).dims = std::vector<int64_t>{1};
  const int32_t cond_result = body->result(again, "while_cond");
  map += fmt::format(
      "\t\t\t\t<output external_port_id=\"-1\" internal_layer_id=\"{}\" "
      "purpose=\"execution_condition\" />\n",
      cond_result);
  Value trips = cx.constant(Tensor::scalar(int64_t(-1)));  // until the condition fails
  auto results_out = add_loop(cx, trips, first, loop_inputs, body, map, back_edges);
  for (size_t k = 0; k < results_out.size(); ++k) cx.set_output(k, results_out[k]);
}

}  // namespace

INGOT_OPENVINO_TRANSLATION(cond, "cond", translate_cond);
INGOT_OPENVINO_TRANSLATION(map, "map", translate_map);
INGOT_OPENVINO_TRANSLATION(while_loop, "while_loop", translate_while_loop);

}  // namespace ingot::exporters::openvino
