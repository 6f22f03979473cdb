#include "ingot/runtime/passes/fuse_sibling_linears.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "ingot/ir/rewrite.h"

namespace ingot::runtime {
namespace {

// A quantized_linear node the rewrite can take, as its parts.
struct Candidate {
  size_t node = 0;
  ir::ValueId input = -1, output = -1;
  ir::Argument qweight, scales, zeros;  // zeros: TensorRef or monostate (None)
  ir::Argument bits, group_size;
};

using ir::tensor_arg;

bool is_none(const ir::Node& n, size_t i) {
  return i >= n.args.size() || std::holds_alternative<std::monostate>(n.args[i]);
}

// The node as a candidate when it is a quantized_linear without bias whose weight tensors
// no node produces (`produced[v]`: some node writes v).
std::optional<Candidate> candidate(const ir::Node& n, size_t index,
                                   const std::vector<bool>& produced) {
  if (n.target != "ingot::quantized_linear" || n.outputs.size() != 1 || n.args.size() != 7)
    return std::nullopt;
  const ir::TensorRef* x = tensor_arg(n, 0);
  const ir::TensorRef* q = tensor_arg(n, 1);
  const ir::TensorRef* s = tensor_arg(n, 2);
  const ir::TensorRef* z = tensor_arg(n, 3);
  if (!x || !q || !s || (!z && !is_none(n, 3)) || !is_none(n, 4)) return std::nullopt;
  if (produced[size_t(q->id)] || produced[size_t(s->id)] || (z && produced[size_t(z->id)]))
    return std::nullopt;
  return Candidate{index,     x->id,     n.outputs[0], n.args[1],
                   n.args[2], n.args[3], n.args[5],    n.args[6]};
}

// Groups of one key, in node order, cut into chunks of 3 (4 -> 2 + 2, 2 -> 2).
template <typename C>
std::vector<std::vector<C>> chunks(const std::vector<C>& siblings) {
  std::vector<std::vector<C>> out;
  size_t i = 0;
  while (siblings.size() - i >= 2) {
    const size_t left = siblings.size() - i;
    const size_t take = left == 2 || left == 4 ? 2 : 3;
    out.emplace_back(siblings.begin() + long(i), siblings.begin() + long(i + take));
    i += take;
  }
  return out;
}

}  // namespace

namespace {

std::vector<bool> produced_values(const ir::Graph& graph) {
  std::vector<bool> produced(graph.num_values(), false);
  for (const ir::Node& n : graph.nodes())
    for (ir::ValueId v : n.outputs) produced[size_t(v)] = true;
  return produced;
}

// Keeps the nodes not marked in `drop`; `graph` becomes out's graph.
void drop_nodes(std::shared_ptr<ir::Graph> graph, const std::vector<bool>& drop,
                ExportedProgram& out) {
  std::vector<ir::Node> kept;
  for (size_t i = 0; i < graph->nodes().size(); ++i)
    if (!drop[i]) kept.push_back(std::move(graph->mutable_nodes()[i]));
  graph->mutable_nodes() = std::move(kept);
  out.graph = graph;
  out.verify();
}

// A float `linear` without bias whose weight no node produces, as (node, input, weight,
// output).
struct FloatCandidate {
  size_t node = 0;
  ir::ValueId input = -1;
  ir::Argument weight;
  ir::ValueId output = -1;
};

std::optional<FloatCandidate> float_candidate(const ir::Node& n, size_t index,
                                              const std::vector<bool>& produced) {
  if (n.target != "linear" || n.outputs.size() != 1 || n.args.size() < 2 || n.args.size() > 3 ||
      !is_none(n, 2))
    return std::nullopt;
  const ir::TensorRef* x = tensor_arg(n, 0);
  const ir::TensorRef* w = tensor_arg(n, 1);
  if (!x || !w || produced[size_t(w->id)]) return std::nullopt;
  return FloatCandidate{index, x->id, n.args[1], n.outputs[0]};
}

}  // namespace

ExportedProgram fuse_sibling_float_linears(const ExportedProgram& program, int* fused) {
  ExportedProgram out = program;
  auto graph = std::make_shared<ir::Graph>(*program.graph);
  const std::vector<bool> produced = produced_values(*graph);
  // (input, weight dtype) -> its candidates in node order.
  std::map<std::tuple<ir::ValueId, DType>, std::vector<FloatCandidate>> groups;
  for (size_t i = 0; i < graph->nodes().size(); ++i) {
    std::optional<FloatCandidate> c = float_candidate(graph->nodes()[i], i, produced);
    if (!c) continue;
    const DType weight_dtype = graph->value(std::get<ir::TensorRef>(c->weight).id).dtype;
    groups[{c->input, weight_dtype}].push_back(*c);
  }
  std::vector<bool> drop(graph->nodes().size(), false);
  int count = 0;
  for (const auto& [key, siblings] : groups) {
    for (const std::vector<FloatCandidate>& chunk : chunks(siblings)) {
      ir::Node& first = graph->mutable_nodes()[chunk[0].node];
      first.target = chunk.size() == 2 ? "ingot::linear2" : "ingot::linear3";
      first.args = {ir::TensorRef{chunk[0].input}};
      first.outputs.clear();
      for (const FloatCandidate& c : chunk) {
        first.args.push_back(c.weight);
        first.outputs.push_back(c.output);
        if (c.node != chunk[0].node) drop[c.node] = true;
      }
      ++count;
    }
  }
  if (count > 0) drop_nodes(graph, drop, out);
  if (fused) *fused = count;
  return out;
}

ExportedProgram fuse_sibling_linears(const ExportedProgram& program, int* fused) {
  ExportedProgram out = program;
  auto graph = std::make_shared<ir::Graph>(*program.graph);
  const std::vector<bool> produced = produced_values(*graph);
  // (input, bits, group size, has zeros) -> its candidates in node order. bits and group
  // size are compared as printed expressions (integers in practice).
  std::map<std::tuple<ir::ValueId, std::string, std::string, bool>, std::vector<Candidate>> groups;
  for (size_t i = 0; i < graph->nodes().size(); ++i) {
    std::optional<Candidate> c = candidate(graph->nodes()[i], i, produced);
    if (!c) continue;
    const auto* bits = std::get_if<sym::Expr>(&c->bits);
    const auto* group = std::get_if<sym::Expr>(&c->group_size);
    if (!bits || !group) continue;
    groups[{c->input, bits->str(), group->str(), std::holds_alternative<ir::TensorRef>(c->zeros)}]
        .push_back(*c);
  }
  std::vector<bool> drop(graph->nodes().size(), false);
  int count = 0;
  for (const auto& [key, siblings] : groups) {
    for (const std::vector<Candidate>& chunk : chunks(siblings)) {
      ir::Node& first = graph->mutable_nodes()[chunk[0].node];
      first.target = chunk.size() == 2 ? "ingot::quantized_linear2" : "ingot::quantized_linear3";
      first.args = {ir::TensorRef{chunk[0].input}};
      first.outputs.clear();
      for (const Candidate& c : chunk) {
        first.args.insert(first.args.end(), {c.qweight, c.scales, c.zeros});
        first.outputs.push_back(c.output);
        if (c.node != chunk[0].node) drop[c.node] = true;
      }
      first.args.insert(first.args.end(), {chunk[0].bits, chunk[0].group_size});
      ++count;
    }
  }
  if (count > 0) drop_nodes(graph, drop, out);
  if (fused) *fused = count;
  return out;
}

int FuseSiblingLinearsPass::run(ExportedProgram& program, const PassTarget&) {
  int fused = 0;
  program = fuse_sibling_linears(program, &fused);
  return fused;
}

int FuseSiblingFloatLinearsPass::run(ExportedProgram& program, const PassTarget&) {
  int fused = 0;
  program = fuse_sibling_float_linears(program, &fused);
  return fused;
}

}  // namespace ingot::runtime
