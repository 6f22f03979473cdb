#include "ingot/exporters/onnx/optimize.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ingot/exporters/onnx/ir_fixes.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/ops/functional.h"

namespace ingot::exporters::onnx {

namespace {

int64_t int_attr(const NodeProto& n, std::string_view name, int64_t fallback) {
  const AttributeProto* a = n.find_attribute(name);
  if (a == nullptr) return fallback;
  if (const auto* v = std::get_if<int64_t>(&a->value)) return *v;
  return fallback;
}

std::vector<int64_t> to_ints(const Tensor& t) {
  Tensor c = contiguous(to(t, DType::I64));
  return std::vector<int64_t>(c.data<int64_t>(), c.data<int64_t>() + c.numel());
}

SymIntList sym_list(const std::vector<int64_t>& v) {
  SymIntList out;
  for (int64_t x : v) out.push_back(SymInt(x));
  return out;
}

int64_t norm_axis(int64_t a, int64_t rank) {
  return a < 0 ? a + rank : a;
}

// What the folder knows about the values of one graph (and its enclosing graphs).
struct Known {
  std::unordered_map<std::string, Tensor> constants;
  std::unordered_map<std::string, std::vector<int64_t>> shapes;  // fully static shapes
  const Known* parent = nullptr;

  const Tensor* constant(const std::string& n) const {
    for (const Known* k = this; k; k = k->parent) {
      if (auto it = k->constants.find(n); it != k->constants.end()) return &it->second;
    }
    return nullptr;
  }
  const std::vector<int64_t>* shape(const std::string& n) const {
    for (const Known* k = this; k; k = k->parent) {
      if (auto it = k->shapes.find(n); it != k->shapes.end()) return &it->second;
    }
    return nullptr;
  }
};

std::optional<std::vector<int64_t>> static_dims(const ValueInfoProto& v) {
  if (!v.type || !v.type->shape) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *v.type->shape) {
    if (!d.is_value()) return std::nullopt;
    out.push_back(d.dim_value());
  }
  return out;
}

// Evaluates one node on constant inputs; nullopt when the op or a case is not handled.
std::optional<Tensor> evaluate(const NodeProto& n, const std::vector<const Tensor*>& in,
                               const Known& known) {
  const std::string& op = n.op_type;
  auto all = [&](size_t count) {
    if (in.size() < count) return false;
    for (size_t i = 0; i < count; ++i) {
      if (in[i] == nullptr) return false;
    }
    return true;
  };
  if (op == "Shape") {
    const std::vector<int64_t>* s = n.input.empty() ? nullptr : known.shape(n.input[0]);
    if (s == nullptr) return std::nullopt;
    const int64_t r = int64_t(s->size());
    int64_t start = std::clamp(norm_axis(int_attr(n, "start", 0), r), int64_t(0), r);
    int64_t end = std::clamp(norm_axis(int_attr(n, "end", r), r), int64_t(0), r);
    std::vector<int64_t> v(s->begin() + start, s->begin() + std::max(start, end));
    return Tensor::from_vector(v, {int64_t(v.size())});
  }
  if (op == "Identity" && all(1)) return *in[0];
  if (op == "Cast" && all(1)) return to(*in[0], to_dtype(DataType(int_attr(n, "to", 1))));
  if (op == "Reshape" && all(2)) {
    std::vector<int64_t> shape = to_ints(*in[1]);
    const bool allowzero = int_attr(n, "allowzero", 0) != 0;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowzero) {
        if (int64_t(i) >= in[0]->dim()) return std::nullopt;
        shape[i] = in[0]->size(int64_t(i));
      }
    }
    return contiguous(reshape(*in[0], sym_list(shape)));
  }
  if (op == "Unsqueeze" && all(2)) {
    std::vector<int64_t> axes = to_ints(*in[1]);
    const int64_t r = in[0]->dim() + int64_t(axes.size());
    for (int64_t& a : axes) a = norm_axis(a, r);
    std::sort(axes.begin(), axes.end());
    Tensor t = *in[0];
    for (int64_t a : axes) t = unsqueeze(t, a);
    return contiguous(t);
  }
  if (op == "Squeeze" && all(2)) {
    std::vector<int64_t> axes = to_ints(*in[1]);
    for (int64_t& a : axes) a = norm_axis(a, in[0]->dim());
    std::sort(axes.rbegin(), axes.rend());
    Tensor t = *in[0];
    for (int64_t a : axes) t = squeeze(t, a);
    return contiguous(t);
  }
  if (op == "Concat" && all(in.size()) && !in.empty()) {
    TensorList parts;
    for (const Tensor* t : in) parts.push_back(*t);
    return cat(parts, int_attr(n, "axis", 0));
  }
  if (op == "Gather" && all(2)) {
    const Tensor& data = *in[0];
    if (data.dim() == 0) return std::nullopt;
    const int64_t axis = norm_axis(int_attr(n, "axis", 0), data.dim());
    Tensor idx = to(*in[1], DType::I64);
    idx = where(lt(idx, Scalar(0)), add(idx, Scalar(data.size(axis))), idx);
    Tensor picked = index_select(data, axis, reshape(idx, sym_list({-1})));
    const IntShape data_sizes = data.sizes();
    std::vector<int64_t> shape(data_sizes.begin(), data_sizes.begin() + axis);
    for (int64_t s : in[1]->sizes()) shape.push_back(s);
    for (int64_t d = axis + 1; d < data.dim(); ++d) shape.push_back(data.size(d));
    return contiguous(reshape(picked, sym_list(shape)));
  }
  if (op == "Slice" && all(3)) {
    const Tensor& data = *in[0];
    std::vector<int64_t> starts = to_ints(*in[1]), ends = to_ints(*in[2]);
    std::vector<int64_t> axes, steps(starts.size(), 1);
    if (in.size() > 3) {
      if (in[3] == nullptr) return std::nullopt;
      axes = to_ints(*in[3]);
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    }
    if (in.size() > 4) {
      if (in[4] == nullptr) return std::nullopt;
      steps = to_ints(*in[4]);
    }
    Tensor t = data;
    for (size_t i = 0; i < starts.size(); ++i) {
      if (steps[i] <= 0) return std::nullopt;
      t = slice(t, norm_axis(axes[i], data.dim()), SymInt(starts[i]), SymInt(ends[i]),
                SymInt(steps[i]));
    }
    return contiguous(t);
  }
  using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;
  static const std::map<std::string, Binary> kBinary = {
      {"Add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"Sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"Mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"Div",
       [](const Tensor& a, const Tensor& b) {
         return is_floating(a.dtype()) ? div(a, b) : div(a, b, std::string("trunc"));
       }},
      {"Min", [](const Tensor& a, const Tensor& b) { return where(lt(b, a), b, a); }},
      {"Max", [](const Tensor& a, const Tensor& b) { return where(gt(b, a), b, a); }},
      {"Equal", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"Less", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"LessOrEqual", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"Greater", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"GreaterOrEqual", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
      {"And", [](const Tensor& a, const Tensor& b) { return logical_and(a, b); }},
      {"Or", [](const Tensor& a, const Tensor& b) { return logical_or(a, b); }},
  };
  if (auto it = kBinary.find(op); it != kBinary.end() && all(2)) {
    if (in[0]->dtype() != in[1]->dtype()) return std::nullopt;  // ONNX requires equal types
    Tensor r = it->second(*in[0], *in[1]);
    // Arithmetic keeps the input type (ingot would promote bool, but ONNX does not).
    const bool boolean = op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
                         op == "GreaterOrEqual" || op == "And" || op == "Or";
    return contiguous(boolean ? r : to(r, in[0]->dtype()));
  }
  if (op == "Not" && all(1)) return logical_not(*in[0]);
  if (op == "Where" && all(3)) return contiguous(where(*in[0], *in[1], *in[2]));
  if (op == "Range" && all(3)) {
    const DType t = in[0]->dtype();
    auto scalar_of = [&](const Tensor& x) {
      return is_floating(t) ? Scalar(to(x, DType::F64).item<double>())
                            : Scalar(to(x, DType::I64).item<int64_t>());
    };
    return arange(scalar_of(*in[0]), scalar_of(*in[1]), scalar_of(*in[2]), t);
  }
  if (op == "Expand" && all(2)) {
    std::vector<int64_t> shape = to_ints(*in[1]);
    const Tensor& x = *in[0];
    // Bidirectional broadcast of x's shape and `shape`.
    const size_t r = std::max(shape.size(), size_t(x.dim()));
    std::vector<int64_t> out(r, 1);
    for (size_t i = 0; i < r; ++i) {
      const int64_t a = i + shape.size() >= r ? shape[i + shape.size() - r] : 1;
      const int64_t b = i + size_t(x.dim()) >= r ? x.size(int64_t(i + size_t(x.dim()) - r)) : 1;
      if (a != b && a != 1 && b != 1) return std::nullopt;
      out[i] = a == 1 ? b : a;
    }
    return contiguous(expand(x, sym_list(out)));
  }
  return std::nullopt;
}

struct Optimizer {
  OptimizeStats stats;

  static int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  }

  NodeProto constant_node(const std::string& output, const Tensor& t, const std::string& name) {
    NodeProto c;
    c.op_type = "Constant";
    c.name = name;
    c.output = {output};
    TensorProto value = make_tensor("", contiguous(t));
    c.attribute.push_back(AttributeProto{"value", std::move(value), ""});
    return c;
  }

  // Folds the nodes of g (recursing into subgraphs with `parent` knowledge).
  void fold(GraphProto& g, const Known* parent) {
    Known known;
    known.parent = parent;
    for (const ValueInfoProto& v : g.input) {
      if (auto d = static_dims(v)) known.shapes[v.name] = *d;
    }
    for (const ValueInfoProto& v : g.value_info) {
      if (auto d = static_dims(v)) known.shapes[v.name] = *d;
    }
    for (const TensorProto& t : g.initializer) {
      known.shapes[t.name] = t.dims;
      if (t.data_location != DataLocation::External && numel(t.dims) <= kMaxFoldedElements &&
          t.data_type != DataType::String) {
        // Graph inputs of the same name (defaults) may be overridden: not constants.
        bool is_input = false;
        for (const ValueInfoProto& v : g.input) is_input = is_input || v.name == t.name;
        if (!is_input) known.constants[t.name] = to_tensor(t);
      }
    }
    for (NodeProto& n : g.node) {
      for (AttributeProto& a : n.attribute) {
        if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) fold(**sub, &known);
      }
      if (n.op_type == "Constant") {
        if (const AttributeProto* v = n.find_attribute("value")) {
          if (const auto* t = std::get_if<TensorProto>(&v->value)) {
            known.constants[n.output.at(0)] = to_tensor(*t);
            known.shapes[n.output.at(0)] = t->dims;
          }
        }
        continue;
      }
      if (n.output.size() != 1 || !n.domain.empty()) continue;
      std::vector<const Tensor*> in;
      for (const std::string& name : n.input)
        in.push_back(name.empty() ? nullptr : known.constant(name));
      std::optional<Tensor> r;
      try {
        r = evaluate(n, in, known);
      } catch (const std::exception&) {
        r = std::nullopt;  // an input the folder cannot evaluate: leave the node to the runtime
      }
      if (!r || r->numel() > kMaxFoldedElements) continue;
      const std::string out = n.output[0];
      n = constant_node(out, *r, n.name);
      known.constants[out] = *r;
      const IntShape sizes = r->sizes();
      known.shapes[out] = std::vector<int64_t>(sizes.begin(), sizes.end());
      ++stats.folded;
    }
  }

  // Merges equal Constant nodes within each graph: later ones become reads of the first.
  void merge(GraphProto& g, std::map<std::string, std::string>& rename) {
    std::map<std::string, std::string> seen;  // (type, dims, bytes) key -> first output
    std::vector<NodeProto> kept;
    for (NodeProto& n : g.node) {
      for (std::string& in : n.input) {
        if (auto it = rename.find(in); it != rename.end()) in = it->second;
      }
      for (AttributeProto& a : n.attribute) {
        if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) merge(**sub, rename);
      }
      if (n.op_type == "Constant" && n.output.size() == 1) {
        if (const AttributeProto* v = n.find_attribute("value")) {
          if (const auto* t = std::get_if<TensorProto>(&v->value);
              t && t->data_location == DataLocation::Default) {
            std::string key = std::to_string(int(t->data_type)) + ":";
            for (int64_t d : t->dims) key += std::to_string(d) + ",";
            key += ":" + std::string(tensor_bytes(*t).str());
            auto [it, inserted] = seen.emplace(key, n.output[0]);
            if (!inserted && !is_output(g, n.output[0])) {
              rename[n.output[0]] = it->second;
              ++stats.merged;
              continue;
            }
          }
        }
      }
      kept.push_back(std::move(n));
    }
    g.node = std::move(kept);
    for (ValueInfoProto& o : g.output) {
      (void)o;  // outputs are never renamed: merged constants are never graph outputs
    }
  }

  static bool is_output(const GraphProto& g, const std::string& name) {
    for (const ValueInfoProto& o : g.output) {
      if (o.name == name) return true;
    }
    return false;
  }

  // Every value name read by a node of g or its subgraphs, plus g's outputs.
  static void collect_reads(const GraphProto& g, std::set<std::string>& reads) {
    for (const ValueInfoProto& o : g.output) reads.insert(o.name);
    for (const NodeProto& n : g.node) {
      for (const std::string& in : n.input) reads.insert(in);
      for (const AttributeProto& a : n.attribute) {
        if (const auto* sub = std::get_if<Box<GraphProto>>(&a.value)) collect_reads(**sub, reads);
      }
    }
  }

  // Removes nodes whose outputs nothing reads, until none is left to remove.
  void remove_dead(ModelProto& m) {
    for (bool changed = true; changed;) {
      changed = false;
      std::set<std::string> reads;
      collect_reads(m.graph, reads);
      for_each_graph(m.graph, [&](GraphProto& g) {
        std::vector<NodeProto> kept;
        for (NodeProto& n : g.node) {
          bool live = false;
          for (const std::string& o : n.output) live = live || reads.contains(o);
          if (live) {
            kept.push_back(std::move(n));
          } else {
            ++stats.removed;
            changed = true;
          }
        }
        g.node = std::move(kept);
      });
    }
    // value_info of removed values would dangle: keep only what still exists.
    for_each_graph(m.graph, [&](GraphProto& g) {
      std::set<std::string> defined;
      for (const NodeProto& n : g.node) defined.insert(n.output.begin(), n.output.end());
      std::vector<ValueInfoProto> kept;
      for (ValueInfoProto& v : g.value_info) {
        if (defined.contains(v.name)) kept.push_back(std::move(v));
      }
      g.value_info = std::move(kept);
    });
  }
};

}  // namespace

size_t count_nodes(const ModelProto& model) {
  size_t n = 0;
  for_each_graph(const_cast<GraphProto&>(model.graph), [&](GraphProto& g) { n += g.node.size(); });
  return n;
}

OptimizeStats optimize(ModelProto& model) {
  Optimizer o;
  o.stats.nodes_before = count_nodes(model);
  o.fold(model.graph, nullptr);
  std::map<std::string, std::string> rename;
  o.merge(model.graph, rename);
  o.remove_dead(model);
  o.stats.nodes_after = count_nodes(model);
  return o.stats;
}

}  // namespace ingot::exporters::onnx
