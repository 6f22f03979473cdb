#include "ingot/formats/pt2/reader.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <unordered_map>

#include "ingot/core/error.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/export.h"
#include "ingot/export/tracer.h"
#include "ingot/formats/archive_json.h"
#include "ingot/formats/pt2/aten_ops.h"
#include "ingot/formats/pt2/sympy_expr.h"
#include "ingot/formats/pt2/treespec.h"
#include "ingot/formats/pt2/zip.h"
#include "ingot/ops/registry.h"
#include "ingot/sym/sym_node.h"

namespace ingot::pt2 {
namespace {

using archive::Json;
using archive::JsonView;

constexpr int kMaxJsonDepth = 512;
constexpr int kMaxGraphDepth = 32;
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

// torch's ScalarType numbering (torch/_export/serde/schema.py).
std::optional<DType> dtype_of(int64_t code) {
  switch (code) {
    case 1:
      return DType::U8;
    case 2:
      return DType::I8;
    case 3:
      return DType::I16;
    case 4:
      return DType::I32;
    case 5:
      return DType::I64;
    case 6:
      return DType::F16;
    case 7:
      return DType::F32;
    case 8:
      return DType::F64;
    case 12:
      return DType::Bool;
    case 13:
      return DType::BF16;
    default:
      return std::nullopt;
  }
}

// A float of torch's JSON: a number, or "Infinity" / "-Infinity" / "NaN" (how
// torch.export.save writes non-finite values), or ingot's "inf" / "-inf" / "nan".
double float_of(const JsonView& v) {
  if (v.is_string()) {
    const std::string& s = v.as_string();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return v.as_double();
}

// Throws an error of e's type with `message` (adding where it happened).
[[noreturn]] void rethrow_at(const Error& e, const std::string& message) {
  if (dynamic_cast<const NotSupportedError*>(&e)) throw NotSupportedError(message);
  if (dynamic_cast<const ShapeError*>(&e)) throw ShapeError(message);
  if (dynamic_cast<const DTypeError*>(&e)) throw DTypeError(message);
  if (dynamic_cast<const ValueError*>(&e)) throw ValueError(message);
  if (dynamic_cast<const IoError*>(&e)) throw IoError(message);
  throw InternalError(message);
}

// The one active field of a serialized union ({"as_tensor": {...}}).
std::pair<std::string, JsonView> union_field(const JsonView& v) {
  if (!v.is_object() || v.json().size() != 1) v.fail("expected a union with one field");
  auto m = v.members();
  return {m[0].first, m[0].second};
}

// Parameters and buffers by their dotted torch names, as an nn::Module tree, so the
// export tracer lifts them exactly as it lifts a C++ model's state.
class StateTree : public nn::Module {
 public:
  StateTree() : Module("Pt2State") {}
  Tensor* add(const std::string& fqn, Tensor t, bool parameter, bool persistent) {
    const size_t dot = fqn.find('.');
    if (dot == std::string::npos)
      return parameter ? register_parameter(fqn, std::move(t))
                       : register_buffer(fqn, std::move(t), persistent);
    const std::string head = fqn.substr(0, dot);
    auto c = std::dynamic_pointer_cast<StateTree>(child(head));
    if (!c) c = register_module(head, std::make_shared<StateTree>());
    return c->add(fqn.substr(dot + 1), std::move(t), parameter, persistent);
  }
};

struct UserInput {
  std::string name;  // graph placeholder ("x"); empty for a constant input
  bool is_tensor = false;
  StaticValue value;  // constant inputs
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, std::string origin,
         std::function<std::shared_ptr<Storage>(uint64_t, uint64_t)> region)
      : origin_(std::move(origin)), zip_(data, size, origin_), region_(std::move(region)) {}

  ExportedProgram read(Pt2Info* info);

 private:
  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    throw IoError(fmt::format("[pt2] '{}': {}", origin_, fmt::format(f, std::forward<A>(a)...)));
  }
  std::string_view record(const std::string& name) const {
    const ZipRecord* r = zip_.find(prefix_ + name);
    if (!r) fail("the archive has no record '{}' (is it a torch.export .pt2 file?)", name);
    return zip_.bytes(*r);
  }
  Json parse_json(std::string_view text, const std::string& what) const;
  void check_archive();
  void check_versions(const JsonView& root, Pt2Info* info);
  void check_ops(const JsonView& graph, std::map<std::string, int>& missing, int depth) const;
  std::map<std::string, Tensor> load_payloads(const std::string& folder, const std::string& config);
  Tensor load_tensor(const JsonView& meta, const std::string& record_name, const std::string& what);
  Shape meta_sizes(const JsonView& meta, const std::string& what,
                   std::vector<int64_t>* hints) const;

  // --- interpreting the graph under the tracer --------------------------------------
  using Env = std::unordered_map<std::string, PValue>;
  PValue argument(const JsonView& a, const Env& env) const;
  const PValue& lookup(const Env& env, const std::string& name, const JsonView& where) const;
  std::vector<PValue> run_graph(const JsonView& graph, const std::vector<PValue>& inputs,
                                int depth) const;
  void run_node(const JsonView& node, Env& env, int depth) const;
  std::vector<PValue> run_hop(const std::string& which, const JsonView& node, const Env& env,
                              int depth) const;
  void bind_outputs(const JsonView& node, const std::vector<PValue>& results, Env& env) const;

  std::string origin_;
  ZipReader zip_;
  std::function<std::shared_ptr<Storage>(uint64_t, uint64_t)> region_;
  std::string prefix_;
  Json doc_;
};

Json Reader::parse_json(std::string_view text, const std::string& what) const {
  try {
    Json::parser_callback_t limit = [&](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxJsonDepth) fail("{} nests deeper than {} levels", what, kMaxJsonDepth);
      return true;
    };
    return Json::parse(text.begin(), text.end(), limit);
  } catch (const Json::exception& e) {
    fail("{} is not valid JSON: {}", what, e.what());
  }
}

void Reader::check_archive() {
  if (zip_.records().empty()) fail("the archive is empty");
  const std::string& first = zip_.records()[0].name;
  const size_t slash = first.find('/');
  if (slash == std::string::npos) fail("record '{}' is not inside the archive's folder", first);
  prefix_ = first.substr(0, slash + 1);
  for (const ZipRecord& r : zip_.records()) {
    if (r.name.rfind(prefix_, 0) != 0)
      fail("record '{}' is outside the archive folder '{}'", r.name, prefix_);
  }
  const std::string_view format = record("archive_format");
  if (format != "pt2")
    fail(
        "archive_format is '{}', not 'pt2' (a torch.save / TorchScript file is not a torch.export "
        "archive)",
        std::string(format.substr(0, 64)));
  if (const ZipRecord* b = zip_.find(prefix_ + "byteorder")) {
    const std::string_view order = zip_.bytes(*b);
    if (order != "little")
      fail("byteorder is '{}'; ingot reads little-endian archives only",
           std::string(order.substr(0, 16)));
  }
}

void Reader::check_versions(const JsonView& root, Pt2Info* info) {
  const std::string_view av = record("archive_version");
  if (av != std::to_string(kArchiveVersion))
    fail("archive_version '{}' is not supported (supported: {})", std::string(av.substr(0, 16)),
         kArchiveVersion);
  const JsonView sv = root.get("schema_version");
  const int64_t major = sv.get("major").as_int(), minor = sv.get("minor").as_int();
  if (major != kSchemaMajor)
    fail(
        "schema version {}.{} is not supported (this ingot reads schema {}.x, written by torch "
        "2.12 - 2.15)",
        major, minor, kSchemaMajor);
  if (info) {
    info->schema_major = int(major);
    info->schema_minor = int(minor);
    info->archive_version = std::string(av);
    if (auto tv = root.find("torch_version")) info->torch_version = tv->as_string();
    if (auto vs = root.find("verifiers"); vs && vs->size() > 0)
      info->dialect = vs->at(0).as_string();
    for (const ZipRecord& r : zip_.records())
      info->records.push_back(r.name.substr(prefix_.size()));
  }
}

// Collects every op of the graph (and its subgraphs) that ingot cannot call.
void Reader::check_ops(const JsonView& graph, std::map<std::string, int>& missing,
                       int depth) const {
  if (depth > kMaxGraphDepth) graph.fail("subgraphs nested deeper than {} levels", kMaxGraphDepth);
  for (const JsonView& n : graph.get("nodes").elements()) {
    const std::string& target = n.get("target").as_string();
    static const std::string hop = "torch.ops.higher_order.";
    if (target.rfind(hop, 0) == 0) {
      const std::string which = target.substr(hop.size());
      if (which != "cond" && which != "while_loop" && which != "map_impl") ++missing[target];
      for (const JsonView& in : n.get("inputs").elements()) {
        const JsonView arg = in.get("arg");
        if (arg.is_object() && arg.json().contains("as_graph"))
          check_ops(arg.get("as_graph").get("graph"), missing, depth + 1);
      }
      continue;
    }
    const auto op = parse_target(target);
    if (!op || !is_supported(*op)) ++missing[op ? op->display : target];
  }
}

Shape Reader::meta_sizes(const JsonView& meta, const std::string& what,
                         std::vector<int64_t>* hints) const {
  Shape sizes;
  for (const JsonView& s : meta.get("sizes").elements()) {
    auto [kind, v] = union_field(s);
    if (kind == "as_int") {
      const int64_t n = v.as_int();
      if (n < 0) v.fail("negative size {} of {}", n, what);
      sizes.push_back(n);
      if (hints) hints->push_back(n);
    } else if (kind == "as_expr") {
      // Placeholders' symbolic sizes become Dims of the re-trace; their text is parsed
      // (and checked) here, the hint says what example size to trace with.
      const sym::Expr e = parse_sympy(v.get("expr_str").as_string(), what);
      (void)e;
      sizes.push_back(0);
      int64_t hint = -1;
      if (auto h = v.find("hint")) {
        auto [hk, hv] = union_field(*h);
        if (hk == "as_int") hint = hv.as_int();
      }
      if (hints) hints->push_back(hint);
    } else {
      v.fail("unsupported size kind '{}' in {}", kind, what);
    }
  }
  return sizes;
}

Tensor Reader::load_tensor(const JsonView& meta, const std::string& record_name,
                           const std::string& what) {
  const int64_t code = meta.get("dtype").as_int();
  const auto dtype = dtype_of(code);
  if (!dtype)
    throw NotSupportedError(
        fmt::format("[pt2] '{}': {} has torch dtype code {}, which ingot does not support", origin_,
                    what, code));
  IntShape sizes, strides;
  for (const JsonView& s : meta.get("sizes").elements()) {
    auto [k, v] = union_field(s);
    if (k != "as_int") v.fail("{} must have static sizes", what);
    sizes.push_back(v.as_int());
  }
  for (const JsonView& s : meta.get("strides").elements()) {
    auto [k, v] = union_field(s);
    if (k != "as_int") v.fail("{} must have static strides", what);
    strides.push_back(v.as_int());
  }
  auto [ok_kind, off] = union_field(meta.get("storage_offset"));
  if (ok_kind != "as_int") off.fail("{} must have a static storage offset", what);
  const int64_t offset = off.as_int();
  if (strides.size() != sizes.size())
    meta.fail("{} has {} sizes but {} strides", what, sizes.size(), strides.size());
  // The storage must cover the furthest element the geometry reaches.
  uint64_t numel = 1, extent = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || strides[d] < 0) meta.fail("{} has a negative size or stride", what);
    if (sizes[d] != 0 && numel > kMaxElements / uint64_t(sizes[d]))
      meta.fail("{} has too many elements", what);
    numel *= uint64_t(sizes[d]);
    if (sizes[d] > 0) {
      if (uint64_t(strides[d]) > kMaxElements) meta.fail("{} has a stride out of range", what);
      extent += uint64_t(sizes[d] - 1) * uint64_t(strides[d]);
    }
  }
  if (offset < 0 || uint64_t(offset) > kMaxElements) meta.fail("{} has a bad storage offset", what);
  const ZipRecord* r = zip_.find(prefix_ + record_name);
  if (!r)
    fail("{} is stored in '{}', which the archive lacks (a missing weight file)", what,
         record_name);
  const size_t item = itemsize(*dtype);
  const uint64_t need = numel == 0 ? 0 : (uint64_t(offset) + extent + 1) * item;
  if (r->size < need)
    fail("'{}' holds {} bytes, {} ({}, sizes {}) needs {}", record_name, r->size, what, *dtype,
         fmt::join(sizes, ", "), need);
  std::shared_ptr<Storage> storage;
  if (r->data_offset % 64 == 0) {
    storage = region_(r->data_offset, r->size);  // mapped: no copy
  } else {
    storage = Storage::allocate(size_t(r->size));
    std::memcpy(storage->data(), zip_.bytes(*r).data(), size_t(r->size));
  }
  Tensor t = Tensor::from_storage(storage, *dtype, sizes, strides, offset);
  if (!t.is_contiguous()) t = call_op(OpRegistry::instance().get("clone"), {t}).at(0);
  return t;
}

std::map<std::string, Tensor> Reader::load_payloads(const std::string& folder,
                                                    const std::string& config) {
  std::map<std::string, Tensor> out;
  const ZipRecord* c = zip_.find(prefix_ + folder + config);
  if (!c) return out;
  const std::string what = folder + config;
  const Json j = parse_json(zip_.bytes(*c), "'" + what + "'");
  const std::string origin = origin_ + ":" + what;  // JsonView keeps a pointer to it
  const JsonView root(j, "", origin);
  for (const auto& [name, entry] : root.get("config").members()) {
    if (auto p = entry.find("use_pickle"); p && p->as_bool())
      throw NotSupportedError(fmt::format(
          "[pt2] '{}': '{}' is stored pickled (use_pickle); ingot reads raw tensor payloads only",
          origin_, name));
    out.emplace(name,
                load_tensor(entry.get("tensor_meta"), folder + entry.get("path_name").as_string(),
                            fmt::format("tensor '{}'", name)));
  }
  return out;
}

// --- interpretation ----------------------------------------------------------------------

const PValue& Reader::lookup(const Env& env, const std::string& name, const JsonView& where) const {
  auto it = env.find(name);
  if (it == env.end()) where.fail("uses '{}' before it is defined", name);
  return it->second;
}

PValue Reader::argument(const JsonView& a, const Env& env) const {
  auto [kind, v] = union_field(a);
  auto tensor_of = [&](const JsonView& t) -> Tensor {
    const PValue& p = lookup(env, t.get("name").as_string(), t);
    if (!p.value.is(Value::Kind::Tensor)) t.fail("'{}' is not a tensor", t.get("name").as_string());
    return p.value.tensor();
  };
  auto sym_int = [&](const JsonView& s) -> SymInt {
    auto [k, x] = union_field(s);
    if (k == "as_int") return x.as_int();
    if (k != "as_name") x.fail("unsupported SymInt argument '{}'", k);
    const PValue& p = lookup(env, x.as_string(), x);
    if (!p.value.is(Value::Kind::Int)) x.fail("'{}' is not a SymInt", x.as_string());
    return p.value.sym_int();
  };
  if (kind == "as_none") return {};
  if (kind == "as_tensor") return PValue{Value(tensor_of(v)), {}, {}};
  if (kind == "as_tensors") {
    TensorList l;
    for (const JsonView& t : v.elements()) l.push_back(tensor_of(t));
    return PValue{Value(std::move(l)), {}, {}};
  }
  if (kind == "as_optional_tensors" || kind == "as_optional_tensor") {
    auto opt = [&](const JsonView& e) {
      auto [k, x] = union_field(e);
      return k == "as_none" ? Tensor() : tensor_of(x);
    };
    if (kind == "as_optional_tensor") {
      Tensor t = opt(v);
      return t.defined() ? PValue{Value(t), {}, {}} : PValue{};
    }
    TensorList l;
    for (const JsonView& e : v.elements()) l.push_back(opt(e));
    return PValue{Value(std::move(l)), {}, {}};
  }
  if (kind == "as_int") return PValue{Value(v.as_int()), {}, {}};
  if (kind == "as_ints") {
    IntShape l;
    for (const JsonView& e : v.elements()) l.push_back(e.as_int());
    return PValue{Value(l), {}, {}};
  }
  if (kind == "as_float") return PValue{Value(float_of(v)), {}, {}};
  if (kind == "as_bool") return PValue{Value(v.as_bool()), {}, {}};
  if (kind == "as_string") return PValue{Value(v.as_string()), {}, {}};
  if (kind == "as_sym_int") return PValue{Value(sym_int(v)), {}, {}};
  if (kind == "as_sym_ints") {
    SymIntList l;
    for (const JsonView& e : v.elements()) l.push_back(sym_int(e));
    return PValue{Value(std::move(l)), {}, {}};
  }
  if (kind == "as_sym_bool") {
    auto [k, x] = union_field(v);
    if (k == "as_bool") return PValue{Value(x.as_bool()), {}, {}};
    const PValue& p = lookup(env, x.as_string(), x);
    if (!p.sym_bool && !p.value.is(Value::Kind::Bool))
      x.fail("'{}' is not a SymBool", x.as_string());
    return p;
  }
  if (kind == "as_scalar_type") {
    const auto d = dtype_of(v.as_int());
    if (!d)
      throw NotSupportedError(
          fmt::format("[pt2] '{}': {}: torch dtype code {} is not supported by ingot", origin_,
                      v.path(), v.as_int()));
    return PValue{Value(*d), {}, {}};
  }
  if (kind == "as_device") {
    const std::string& type = v.get("type").as_string();
    return PValue{{}, {}, type};
  }
  if (kind == "as_layout")
    return PValue{{}, {}, v.as_int() == 7 ? "strided" : fmt::format("layout {}", v.as_int())};
  if (kind == "as_memory_format") {
    const int64_t m = v.as_int();
    return PValue{{},
                  {},
                  m == 1   ? "contiguous_format"
                  : m == 4 ? "preserve_format"
                           : fmt::format("memory format {}", m)};
  }
  throw NotSupportedError(
      fmt::format("[pt2] '{}': {}: arguments of kind '{}' are not supported by ingot", origin_,
                  a.path(), kind));
}

void Reader::bind_outputs(const JsonView& node, const std::vector<PValue>& results,
                          Env& env) const {
  const JsonView outs = node.get("outputs");
  // A Tensor[] return serialized as one as_tensors output.
  if (outs.size() == 1 && results.size() == 1 && union_field(outs.at(0)).first == "as_tensors") {
    const JsonView names = union_field(outs.at(0)).second;
    if (!results[0].value.is(Value::Kind::TensorList)) node.fail("expected a list result");
    const TensorList& l = results[0].value.tensor_list();
    if (names.size() != l.size())
      node.fail("{} outputs named, the op returned {}", names.size(), l.size());
    for (size_t i = 0; i < l.size(); ++i)
      env[names.at(i).get("name").as_string()] = PValue{Value(l[i]), {}, {}};
    return;
  }
  // A list result unpacked into several outputs (split's getitems folded in).
  std::vector<PValue> flat = results;
  if (results.size() == 1 && results[0].value.is(Value::Kind::TensorList) && outs.size() != 1) {
    flat.clear();
    for (const Tensor& t : results[0].value.tensor_list()) flat.push_back(PValue{Value(t), {}, {}});
  }
  if (outs.size() > flat.size())
    node.fail("{} outputs named, the op returned {}", outs.size(), flat.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    auto [kind, v] = union_field(outs.at(i));
    if (kind == "as_none") continue;
    if (kind == "as_tensor")
      env[v.get("name").as_string()] = flat[i];
    else if (kind == "as_sym_int" || kind == "as_sym_bool")
      env[v.get("as_name").as_string()] = flat[i];
    else if (kind == "as_tensors") {
      if (!flat[i].value.is(Value::Kind::TensorList)) node.fail("output {} is not a list", i);
      const TensorList& l = flat[i].value.tensor_list();
      if (v.size() != l.size())
        node.fail("output {} names {} tensors, the op returned {}", i, v.size(), l.size());
      for (size_t k = 0; k < l.size(); ++k)
        env[v.at(k).get("name").as_string()] = PValue{Value(l[k]), {}, {}};
    } else {
      v.fail("unsupported output kind '{}'", kind);
    }
  }
}

std::vector<PValue> Reader::run_hop(const std::string& which, const JsonView& node, const Env& env,
                                    int depth) const {
  const JsonView ins = node.get("inputs");
  std::vector<JsonView> graphs;
  std::vector<PValue> plain;
  for (const JsonView& in : ins.elements()) {
    const JsonView arg = in.get("arg");
    if (arg.is_object() && arg.json().contains("as_graph"))
      graphs.push_back(arg.get("as_graph").get("graph"));
    else
      plain.push_back(argument(arg, env));
  }
  auto tensors = [&](const PValue& p, const char* what) -> TensorList {
    if (p.value.is(Value::Kind::TensorList)) return p.value.tensor_list();
    if (p.value.is_none()) return {};
    node.fail("{} of {} must be a list of tensors (SymInt operands are not supported)", what,
              which);
  };
  auto fn = [&](const JsonView& g) -> GraphFn {
    return [this, g, depth](const TensorList& in) {
      std::vector<PValue> args;
      for (const Tensor& t : in) args.push_back(PValue{Value(t), {}, {}});
      TensorList out;
      for (const PValue& p : run_graph(g, args, depth + 1)) {
        if (!p.value.is(Value::Kind::Tensor)) g.fail("subgraph outputs must be tensors");
        out.push_back(p.value.tensor());
      }
      return out;
    };
  };
  TensorList out;
  if (which == "cond") {
    if (graphs.size() != 2 || plain.size() != 2)
      node.fail("cond takes a predicate, two graphs and operands");
    const PValue& pred = plain[0];
    const TensorList ops = tensors(plain[1], "operands");
    if (pred.sym_bool)
      out = cond(*pred.sym_bool, fn(graphs[0]), fn(graphs[1]), ops);
    else if (pred.value.is(Value::Kind::Bool))
      out = cond(SymBool(pred.value.boolean()), fn(graphs[0]), fn(graphs[1]), ops);
    else if (pred.value.is(Value::Kind::Tensor))
      out = cond(pred.value.tensor(), fn(graphs[0]), fn(graphs[1]), ops);
    else
      node.fail("the cond predicate must be a tensor or a SymBool");
  } else if (which == "while_loop") {
    if (graphs.size() != 2 || plain.size() != 2)
      node.fail("while_loop takes two graphs, carried and additional inputs");
    out = while_loop(fn(graphs[0]), fn(graphs[1]), tensors(plain[0], "carried inputs"),
                     tensors(plain[1], "additional inputs"));
  } else {  // map_impl(f, xs, pos_args)
    if (graphs.size() != 1 || plain.size() != 2)
      node.fail("map takes a graph, xs and extra arguments");
    out = map(fn(graphs[0]), tensors(plain[0], "xs"), tensors(plain[1], "extra arguments"));
  }
  std::vector<PValue> r;
  for (Tensor& t : out) r.push_back(PValue{Value(std::move(t)), {}, {}});
  return r;
}

// The user's line of a node: the innermost frame of torch's `stack_trace` metadata that
// is the user's code (not torch's own files, not generated "<eval_with_key>" code).
// Frames read `File "path", line N, in function`.
std::optional<ir::SourceLine> source_of(const JsonView& node) {
  const std::optional<JsonView> meta = node.find("metadata");
  if (!meta || !meta->is_object()) return std::nullopt;
  const std::optional<JsonView> st = meta->find("stack_trace");
  if (!st || !st->json().is_string()) return std::nullopt;
  const std::string& text = st->json().get_ref<const std::string&>();
  std::optional<ir::SourceLine> best;
  size_t pos = 0;
  while ((pos = text.find("File \"", pos)) != std::string::npos) {
    const size_t q = text.find('"', pos + 6);
    if (q == std::string::npos) break;
    const std::string file = text.substr(pos + 6, q - pos - 6);
    pos = q;
    static const std::string kLine = ", line ";
    if (text.compare(q + 1, kLine.size(), kLine) != 0) continue;
    size_t p = q + 1 + kLine.size();
    uint32_t line = 0;
    while (p < text.size() && std::isdigit(static_cast<unsigned char>(text[p])) && line < 100000000)
      line = line * 10 + uint32_t(text[p++] - '0');
    std::string function;
    static const std::string kIn = ", in ";
    if (text.compare(p, kIn.size(), kIn) == 0) {
      const size_t e = text.find('\n', p);
      function = text.substr(p + kIn.size(),
                             e == std::string::npos ? std::string::npos : e - p - kIn.size());
    }
    const bool user = !file.empty() && file[0] != '<' && file.rfind("torch/", 0) != 0 &&
                      file.find("/torch/") == std::string::npos;
    if (user && line > 0) best = ir::SourceLine{file, line, function};
  }
  return best;
}

void Reader::run_node(const JsonView& node, Env& env, int depth) const {
  const std::string& target = node.get("target").as_string();
  // Nodes ingot records for this one carry the user's Python line.
  ir::Tracer* tracer = ir::Tracer::current();
  const std::optional<ir::SourceLine> previous = tracer ? tracer->source_override() : std::nullopt;
  const std::optional<ir::SourceLine> src = tracer ? source_of(node) : std::nullopt;
  if (tracer && src) tracer->set_source_override(src);
  struct Restore {
    ir::Tracer* t;
    const std::optional<ir::SourceLine>& prev;
    bool active;
    ~Restore() {
      if (active) t->set_source_override(prev);
    }
  } restore{tracer, previous, tracer && src};
  static const std::string hop = "torch.ops.higher_order.";
  std::vector<PValue> results;
  if (target.rfind(hop, 0) == 0) {
    results = run_hop(target.substr(hop.size()), node, env, depth);
  } else {
    const auto op = parse_target(target);
    if (!op) node.fail("unknown target '{}'", target);
    std::vector<NamedValue> args;
    for (const JsonView& in : node.get("inputs").elements())
      args.push_back(NamedValue{in.get("name").as_string(), argument(in.get("arg"), env)});
    try {
      results = call_aten(*op, args);
    } catch (const Error& e) {
      const std::string name = node.find("name") ? node.get("name").as_string() : std::string();
      rethrow_at(e, fmt::format("{} (node '{}' of '{}')", e.what(), name, origin_));
    }
  }
  bind_outputs(node, results, env);
}

std::vector<PValue> Reader::run_graph(const JsonView& graph, const std::vector<PValue>& inputs,
                                      int depth) const {
  if (depth > kMaxGraphDepth) graph.fail("subgraphs nested deeper than {} levels", kMaxGraphDepth);
  Env env;
  const JsonView ins = graph.get("inputs");
  if (ins.size() != inputs.size())
    graph.fail("the graph takes {} inputs, {} given", ins.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto [kind, v] = union_field(ins.at(i));
    if (kind == "as_tensor")
      env[v.get("name").as_string()] = inputs[i];
    else if (kind == "as_sym_int" || kind == "as_sym_bool")
      env[v.get("as_name").as_string()] = inputs[i];
    // constants (as_bool, as_int, as_none, ...) bind nothing
  }
  for (const JsonView& n : graph.get("nodes").elements()) run_node(n, env, depth);
  std::vector<PValue> out;
  for (const JsonView& o : graph.get("outputs").elements()) out.push_back(argument(o, env));
  return out;
}

// States `c` in the re-trace (the ShapeEnv learns it: an equality becomes a replacement)
// and, with `record`, records it as an assert whose failure at run time says `message`
// (without: something else checks it at run time, e.g. the input binding checks a size
// the replacement made an expression).
void state_fact(const SymBool& c, const std::string& message, bool record = true) {
  if (auto b = c.maybe_bool()) {
    INGOT_CHECK(*b, ShapeError, "[pt2] {} (false for the example inputs)", message);
    return;
  }
  ir::Tracer* t = ir::Tracer::current();
  INGOT_CHECK(t != nullptr, InternalError, "[pt2] the reader states facts only while tracing");
  const sym::Expr e = sym::expr_of(c);
  t->env().check(e, std::source_location::current());
  if (record) t->add_assert(e, message, t->source_override().value_or(ir::SourceLine{}));
}

// `e` as a SymInt of the trace, each symbol taken from `symbols` (a NotSupportedError
// naming `what` for a symbol no input carries or a kind sizes do not use).
SymInt symint_of(const sym::Expr& e, const std::map<std::string, SymInt>& symbols,
                 const std::string& origin, const std::string& what) {
  auto rec = [&](auto& self, const sym::Expr& x) -> SymInt {
    switch (x.kind()) {
      case sym::Kind::Integer:
        return SymInt(x.value());
      case sym::Kind::Symbol: {
        auto it = symbols.find(x.name());
        if (it == symbols.end())
          throw NotSupportedError(fmt::format(
              "[pt2] '{}': {} uses the symbol '{}', which no input dim or SymInt input carries "
              "by itself; ingot needs each symbol as a plain input size",
              origin, what, x.name()));
        return it->second;
      }
      case sym::Kind::Mul: {
        SymInt r(1);
        for (const sym::Expr& f : x->args) r = r * self(self, f);
        return r;
      }
      case sym::Kind::Add: {
        SymInt r(x->value);
        for (size_t i = 0; i < x->args.size(); ++i)
          r = r + SymInt(x->coeffs[i]) * self(self, x->args[i]);
        return r;
      }
      case sym::Kind::FloorDiv:
        return floordiv(self(self, x->args[0]), self(self, x->args[1]));
      case sym::Kind::Mod:
        return self(self, x->args[0]) % self(self, x->args[1]);
      case sym::Kind::Min:
        return sym_min(self(self, x->args[0]), self(self, x->args[1]));
      case sym::Kind::Max:
        return sym_max(self(self, x->args[0]), self(self, x->args[1]));
      default:
        throw NotSupportedError(
            fmt::format("[pt2] '{}': {} has the size {}, which is not an "
                        "integer expression",
                        origin, what, x.str()));
    }
  };
  return rec(rec, e);
}

StaticValue constant_value(const JsonView& v) {
  auto [k, x] = union_field(v);
  if (k == "as_none") return std::monostate{};
  if (k == "as_int") return x.as_int();
  if (k == "as_float") return float_of(x);
  if (k == "as_bool") return x.as_bool();
  if (k == "as_string") return x.as_string();
  x.fail("unsupported constant kind '{}'", k);
}

TreeSpec static_leaf(StaticValue v) {
  TreeSpec s;
  s.type = "static";
  s.value = std::move(v);
  return s;
}

// Mirrors `spec` with each tensor leaf's dims (the Dims of its symbolic sizes).
DynamicShapes shapes_for(const TreeSpec& spec,
                         std::vector<std::map<int, Dim>>::const_iterator& dims) {
  if (spec.type == "tensor") return DynamicShapes::tensor(*dims++);
  if (spec.type == "static") return DynamicShapes();
  if (spec.keys.empty()) {
    std::vector<DynamicShapes> c;
    for (const TreeSpec& s : spec.children) c.push_back(shapes_for(s, dims));
    return DynamicShapes::tuple(std::move(c));
  }
  std::map<std::string, DynamicShapes> f;
  for (size_t i = 0; i < spec.children.size(); ++i)
    f.emplace(spec.keys[i], shapes_for(spec.children[i], dims));
  return DynamicShapes::dict(std::move(f));
}

ExportedProgram Reader::read(Pt2Info* info) {
  check_archive();
  std::string model = "models/model.json";
  if (!zip_.find(prefix_ + model)) {
    std::vector<std::string> models;
    for (const ZipRecord& r : zip_.records()) {
      const std::string n = r.name.substr(prefix_.size());
      if (n.rfind("models/", 0) == 0 && n.size() > 12 && n.ends_with(".json")) models.push_back(n);
    }
    if (models.size() != 1)
      fail("the archive has no models/model.json (programs found: [{}])", fmt::join(models, ", "));
    model = models[0];
  }
  doc_ = parse_json(record(model), "'" + model + "'");
  const JsonView root(doc_, "", origin_);
  if (!doc_.is_object()) root.fail("the program is not a JSON object");
  check_versions(root, info);
  const JsonView gm = root.get("graph_module");
  const JsonView graph = gm.get("graph");

  std::map<std::string, int> missing;
  check_ops(graph, missing, 0);
  if (!missing.empty()) {
    std::vector<std::string> parts;
    int total = 0;
    for (const auto& [op, n] : missing) {
      parts.push_back(fmt::format("{} (x{})", op, n));
      total += n;
    }
    throw NotSupportedError(fmt::format(
        "[pt2] '{}': {} op(s) in {} node(s) are not supported by ingot: {}. docs/pt2.md lists the "
        "covered ATen ops; a missing one needs an ingot op (docs/ops.md) or an adapter in "
        "src/ingot/formats/pt2/aten_ops.cpp",
        origin_, missing.size(), total, fmt::join(parts, ", ")));
  }

  std::map<std::string, Tensor> weights =
      load_payloads("data/weights/", "model_weights_config.json");
  std::map<std::string, Tensor> constants =
      load_payloads("data/constants/", "model_constants_config.json");

  // Range constraints: the Dims of the re-trace.
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  if (auto rc = root.find("range_constraints")) {
    for (const auto& [name, r] : rc->members()) {
      auto lo = r.find("min_val"), hi = r.find("max_val");
      const int64_t mn = lo ? lo->as_int() : 0;
      const int64_t mx = hi ? hi->as_int() : std::numeric_limits<int64_t>::max();
      if (mn > mx) r.fail("symbol '{}' has an empty range [{}, {}]", name, mn, mx);
      ranges[name] = {mn, mx};
    }
  }

  // Signature: state into the module tree, user inputs as example leaves.
  const JsonView sig = gm.get("signature");
  const JsonView in_specs = sig.get("input_specs");
  const JsonView tvalues = graph.get("tensor_values");
  const JsonView ginputs = graph.get("inputs");
  if (ginputs.size() != in_specs.size())
    sig.fail("{} input specs for {} graph inputs", in_specs.size(), ginputs.size());
  StateTree state;
  struct Placeholder {
    // SymIntInput: a symbolic int user input, fed as a 0-d int64 tensor (leaf `user`) and read
    // with item_int; `expr` is torch's symbol (or expression) for it.
    enum Kind { State, User, Constant, Static, SymIntInput } kind;
    Tensor* slot = nullptr;
    size_t user = 0;
    Tensor constant;
    sym::Expr expr;
    std::string name;
  };
  // An input dim torch sized by an expression of symbols (y: [2*s0]): the re-trace gives
  // it a fresh symbol and states fresh == expr before the graph runs, which makes the
  // ShapeEnv replace the fresh symbol by the expression everywhere (the program's input
  // then has the size 2*s0, checked by the runtime when it binds the inputs).
  struct DerivedDim {
    size_t leaf;
    int d;
    sym::Expr expr;
    std::string what;
  };
  std::vector<DerivedDim> derived;
  // Each plain symbol: the leaf and dim that carry it (its hint is that leaf's size).
  std::map<std::string, std::pair<size_t, int>> carriers;
  std::vector<Placeholder> placeholders;
  std::vector<Leaf> leaves;
  std::vector<TreeSpec> leaf_specs;
  std::vector<std::map<int, Dim>> leaf_dims;
  for (size_t i = 0; i < in_specs.size(); ++i) {
    auto [kind, s] = union_field(in_specs.at(i));
    if (kind == "parameter" || kind == "buffer") {
      const bool param = kind == "parameter";
      const std::string& target = s.get(param ? "parameter_name" : "buffer_name").as_string();
      const bool persistent = param || s.get("persistent").as_bool();
      auto it = weights.find(target);
      if (it == weights.end()) {
        it = constants.find(target);  // non-persistent buffers travel as constants
        if (it == constants.end())
          fail("the archive has no data for {} '{}' (data/weights/ is incomplete)", kind, target);
      }
      const std::string& ph = s.get("arg").get("name").as_string();
      std::vector<int64_t> hints;
      const Shape want = meta_sizes(tvalues.get(ph.c_str()), ph, &hints);
      if (IntShape(hints) != it->second.sizes())
        fail("{} '{}' has sizes [{}] in the archive but the graph expects [{}]", kind, target,
             fmt::join(it->second.sizes(), ", "), fmt::join(hints, ", "));
      Tensor* slot = nullptr;
      try {
        slot = state.add(target, it->second, param, persistent);
      } catch (const ValueError& e) {
        fail("state name '{}' cannot be used: {}", target, e.what());
      }
      placeholders.push_back({Placeholder::State, slot, 0, {}, {}, {}});
    } else if (kind == "tensor_constant") {
      const std::string& target = s.get("tensor_constant_name").as_string();
      auto it = constants.find(target);
      if (it == constants.end())
        fail("the archive has no data for constant '{}' (data/constants/)", target);
      placeholders.push_back({Placeholder::Constant, nullptr, 0, it->second, {}, {}});
    } else if (kind == "user_input") {
      auto [ak, a] = union_field(s.get("arg"));
      if (ak == "as_tensor") {
        const std::string& name = a.get("name").as_string();
        const JsonView meta = tvalues.get(name.c_str());
        const auto dtype = dtype_of(meta.get("dtype").as_int());
        if (!dtype) meta.fail("input '{}' has an unsupported dtype", name);
        std::vector<int64_t> hints;
        meta_sizes(meta, "input '" + name + "'", &hints);
        std::map<int, Dim> dims;
        IntShape example;
        const JsonView sizes = meta.get("sizes");
        for (size_t d = 0; d < hints.size(); ++d) {
          auto [sk, sv] = union_field(sizes.at(d));
          if (sk != "as_expr") {
            example.push_back(hints[d]);
            continue;
          }
          const std::string what = fmt::format("input '{}' dim {}", name, d);
          const sym::Expr e = parse_sympy(sv.get("expr_str").as_string(), what);
          if (!e.is_symbol()) {
            // Sized by an expression: a fresh symbol stated equal to it (see DerivedDim);
            // its hint is computed from the symbols' hints once every input is read.
            const std::string fresh = fmt::format("{}_dim{}", name, d);
            if (ranges.contains(fresh)) sv.fail("symbol name '{}' is already used", fresh);
            dims.emplace(int(d), Dim(fresh, 0, std::numeric_limits<int64_t>::max()));
            derived.push_back(DerivedDim{leaves.size(), int(d), e, what});
            example.push_back(hints[d]);
            continue;
          }
          auto r = ranges.find(e.name());
          if (r == ranges.end()) sv.fail("symbol '{}' has no range constraint", e.name());
          dims.emplace(int(d), Dim(e.name(), r->second.first, r->second.second));
          int64_t hint = hints[d];
          if (hint < r->second.first || hint > r->second.second)
            hint = std::max<int64_t>(r->second.first, 2);
          example.push_back(hint);
          carriers.emplace(e.name(), std::pair(leaves.size(), int(d)));
        }
        leaves.push_back(Leaf{Tensor::empty(example, *dtype, true), {}});
        leaf_specs.push_back(TreeSpec{"tensor", {}, {}, {}});
        leaf_dims.push_back(std::move(dims));
        placeholders.push_back({Placeholder::User, nullptr, leaves.size() - 1, {}, {}, {}});
      } else if (ak == "as_sym_int") {
        // A SymInt input (forward(x, n: int) with n dynamic): ingot programs take tensors,
        // so n is a 0-d int64 tensor read with item_int (see Placeholder::SymIntInput).
        const std::string& name = a.get("as_name").as_string();
        const JsonView sv = graph.get("sym_int_values").get(name.c_str());
        auto [vk, vv] = union_field(sv);
        if (vk != "as_expr") vv.fail("SymInt input '{}' has no expression", name);
        const std::string what = fmt::format("SymInt input '{}'", name);
        const sym::Expr e = parse_sympy(vv.get("expr_str").as_string(), what);
        int64_t hint = 0;
        if (auto h = vv.find("hint")) {
          auto [hk, hv] = union_field(*h);
          if (hk == "as_int") hint = hv.as_int();
        }
        Tensor example = Tensor::empty({}, DType::I64, true);
        example.data<int64_t>()[0] = hint;
        leaves.push_back(Leaf{example, {}});
        leaf_specs.push_back(TreeSpec{"tensor", {}, {}, {}});
        leaf_dims.push_back({});
        Placeholder p{Placeholder::SymIntInput, nullptr, leaves.size() - 1, {}, {}, {}};
        p.expr = e;
        p.name = name;
        placeholders.push_back(std::move(p));
      } else if (ak == "as_sym_float" || ak == "as_sym_bool") {
        throw NotSupportedError(
            fmt::format("[pt2] '{}': a symbolic {} input is not supported; ingot's programs take "
                        "tensors, SymInts (as 0-d int64 tensors) and static values",
                        origin_, ak == "as_sym_float" ? "float" : "bool"));
      } else {
        const StaticValue v = constant_value(s.get("arg"));
        leaves.push_back(Leaf{Tensor(), v});
        leaf_specs.push_back(static_leaf(v));
        placeholders.push_back({Placeholder::Static, nullptr, 0, {}, {}, {}});
      }
    } else if (kind == "constant_input") {
      const StaticValue v = constant_value(s.get("value"));
      leaves.push_back(Leaf{Tensor(), v});
      leaf_specs.push_back(static_leaf(v));
      placeholders.push_back({Placeholder::Static, nullptr, 0, {}, {}, {}});
    } else {
      throw NotSupportedError(fmt::format(
          "[pt2] '{}': input spec '{}' is not supported (custom objects and tokens are not)",
          origin_, kind));
    }
  }

  // Example sizes of the dims sized by expressions: the expression at the symbols' hints.
  if (!derived.empty()) {
    std::map<std::string, SymInt> hint_of;
    for (const auto& [n, c] : carriers) hint_of[n] = leaves[c.first].tensor.size(c.second);
    for (const Placeholder& p : placeholders)
      if (p.kind == Placeholder::SymIntInput && p.expr.is_symbol() &&
          !hint_of.contains(p.expr.name()))
        hint_of[p.expr.name()] = leaves[p.user].tensor.data<int64_t>()[0];
    for (const DerivedDim& dd : derived) {
      const int64_t hint = symint_of(dd.expr, hint_of, origin_, dd.what).expect_int();
      if (hint < 0)
        fail("{} has the size {} = {} at the example sizes", dd.what, dd.expr.str(), hint);
      Tensor& t = leaves[dd.leaf].tensor;
      IntShape sizes = t.sizes();
      sizes[size_t(dd.d)] = hint;
      t = Tensor::empty(sizes, t.dtype(), true);
    }
  }

  // The pytree of the inputs: torch's (args, kwargs), as one root tuple of arguments.
  std::map<std::string, std::vector<std::string>> namedtuples;
  if (auto nt = gm.find("treespec_namedtuple_fields")) {
    for (const auto& [n, f] : nt->members()) {
      std::vector<std::string> fields;
      for (const JsonView& x : f.get("field_names").elements()) fields.push_back(x.as_string());
      namedtuples[n] = fields;
    }
  }
  std::string in_text, out_text;
  std::vector<std::string> arg_names;
  if (auto mcg = gm.find("module_call_graph"); mcg && mcg->size() > 0) {
    if (auto msig = mcg->at(0).find("signature")) {
      in_text = msig->get("in_spec").as_string();
      out_text = msig->get("out_spec").as_string();
      if (auto fan = msig->find("forward_arg_names"))
        for (const JsonView& x : fan->elements()) arg_names.push_back(x.as_string());
    }
  }
  TreeSpec in_spec{"tuple", {}, leaf_specs, {}};
  if (!in_text.empty()) {
    const TreeSpec torch_in =
        treespec_from_torch(in_text, leaf_specs, namedtuples, origin_ + ": in_spec");
    if (torch_in.type == "tuple" && torch_in.children.size() == 2 &&
        torch_in.children[0].type == "tuple") {
      in_spec.children = torch_in.children[0].children;
      const TreeSpec& kw = torch_in.children[1];
      in_spec.children.insert(in_spec.children.end(), kw.children.begin(), kw.children.end());
      if (arg_names.size() != in_spec.children.size()) {
        arg_names.clear();
        for (size_t i = 0; i < torch_in.children[0].children.size(); ++i)
          arg_names.push_back(fmt::format("arg{}", i));
        arg_names.insert(arg_names.end(), kw.keys.begin(), kw.keys.end());
      }
    }
  }
  if (arg_names.size() != in_spec.children.size()) arg_names.clear();

  // Outputs: user outputs are the program's results, mutations are written back.
  const JsonView out_specs = sig.get("output_specs");
  const JsonView gouts = graph.get("outputs");
  if (gouts.size() != out_specs.size())
    sig.fail("{} output specs for {} graph outputs", out_specs.size(), gouts.size());
  std::vector<TreeSpec> out_leaf_specs;

  std::map<std::string, Tensor*> slots;
  for (const nn::NamedSlot& ns : state.named_slots()) slots[ns.fqn] = &ns.slot->value;

  detail::FlatFn fn = [&](const std::vector<Leaf>& traced, TreeSpec& out_spec) {
    // The trace's symbols: each plain input dim, then each SymInt input (read with
    // item_int, stated within its range and equal to a dim that carries the same symbol),
    // then the dims sized by expressions (stated equal to them).
    std::map<std::string, SymInt> symbols;
    for (const auto& [n, c] : carriers) symbols[n] = traced[c.first].tensor.sym_size(c.second);
    std::map<size_t, SymInt> sym_inputs;
    for (const Placeholder& p : placeholders) {
      if (p.kind != Placeholder::SymIntInput) continue;
      const SymInt n = item_int(traced[p.user].tensor);
      const std::string what = fmt::format("SymInt input '{}'", p.name);
      if (p.expr.is_symbol() && !symbols.contains(p.expr.name())) {
        if (auto r = ranges.find(p.expr.name()); r != ranges.end()) {
          const auto [lo, hi] = r->second;
          const bool bounded = hi != std::numeric_limits<int64_t>::max();
          const std::string range =
              bounded ? fmt::format("[{}, {}]", lo, hi) : fmt::format(">= {}", lo);
          state_fact(n >= SymInt(lo), fmt::format("{} must be {} (torch's range of {})", what,
                                                  range, p.expr.name()));
          if (bounded)
            state_fact(n <= SymInt(hi), fmt::format("{} must be {} (torch's range of {})", what,
                                                    range, p.expr.name()));
        }
        symbols[p.expr.name()] = n;
      } else {
        state_fact(n == symint_of(p.expr, symbols, origin_, what),
                   fmt::format("{} must equal {}", what, p.expr.str()));
      }
      sym_inputs[p.user] = n;
    }
    for (const DerivedDim& dd : derived)
      state_fact(
          traced[dd.leaf].tensor.sym_size(dd.d) == symint_of(dd.expr, symbols, origin_, dd.what),
          fmt::format("{} must be {}", dd.what, dd.expr.str()), /*record=*/false);
    std::vector<PValue> inputs;
    for (const Placeholder& p : placeholders) {
      switch (p.kind) {
        case Placeholder::SymIntInput:
          inputs.push_back(PValue{Value(sym_inputs.at(p.user)), {}, {}});
          break;
        case Placeholder::State:
          inputs.push_back(PValue{Value(*p.slot), {}, {}});
          break;
        case Placeholder::User:
          inputs.push_back(PValue{Value(traced[p.user].tensor), {}, {}});
          break;
        case Placeholder::Constant:
          inputs.push_back(PValue{Value(p.constant), {}, {}});
          break;
        case Placeholder::Static:
          inputs.push_back(PValue{});
          break;
      }
    }
    const std::vector<PValue> results = run_graph(graph, inputs, 0);
    std::vector<Leaf> out;
    out_leaf_specs.clear();
    static const OpHandle kCopy("copy_");
    for (size_t i = 0; i < out_specs.size(); ++i) {
      auto [kind, s] = union_field(out_specs.at(i));
      const PValue& r = results[i];
      if (kind == "user_output") {
        if (r.value.is(Value::Kind::Tensor)) {
          out.push_back(Leaf{r.value.tensor(), {}});
          out_leaf_specs.push_back(TreeSpec{"tensor", {}, {}, {}});
        } else if (r.value.is_none() && !r.sym_bool) {
          out.push_back(Leaf{Tensor(), std::monostate{}});
          out_leaf_specs.push_back(static_leaf(std::monostate{}));
        } else if (r.value.is(Value::Kind::Int) && r.value.sym_int().maybe_int()) {
          const StaticValue v = *r.value.sym_int().maybe_int();
          out.push_back(Leaf{Tensor(), v});
          out_leaf_specs.push_back(static_leaf(v));
        } else if (r.value.is(Value::Kind::Float) || r.value.is(Value::Kind::Bool)) {
          const StaticValue v = r.value.is(Value::Kind::Float) ? StaticValue(r.value.f64())
                                                               : StaticValue(r.value.boolean());
          out.push_back(Leaf{Tensor(), v});
          out_leaf_specs.push_back(static_leaf(v));
        } else {
          s.fail("user output {} is a symbolic scalar, which ingot programs cannot return", i);
        }
      } else if (kind == "buffer_mutation" || kind == "user_input_mutation") {
        if (!r.value.is(Value::Kind::Tensor)) s.fail("a mutation output must be a tensor");
        Tensor target;
        if (kind == "buffer_mutation") {
          auto it = slots.find(s.get("buffer_name").as_string());
          if (it == slots.end())
            s.fail("buffer '{}' is not an input of the program", s.get("buffer_name").as_string());
          target = *it->second;
        } else {
          const std::string& name = s.get("user_input_name").as_string();
          for (size_t k = 0; k < placeholders.size(); ++k) {
            auto [ik, is] = union_field(in_specs.at(k));
            if (ik == "user_input" && placeholders[k].kind == Placeholder::User &&
                union_field(is.get("arg")).second.get("name").as_string() == name)
              target = traced[placeholders[k].user].tensor;
          }
          if (!target.defined())
            s.fail("user input '{}' is not a tensor input of the program", name);
        }
        if (!target.is_same(r.value.tensor())) kCopy({target, r.value.tensor()});
      } else {
        throw NotSupportedError(
            fmt::format("[pt2] '{}': output spec '{}' is not supported (training outputs are not)",
                        origin_, kind));
      }
    }
    out_spec = TreeSpec{"tuple", {}, out_leaf_specs, {}};
    return out;
  };

  ExportOptions options;
  auto dims_it = leaf_dims.cbegin();
  options.dynamic_shapes = shapes_for(in_spec, dims_it);
  options.input_names = arg_names;
  // torch already proved its guards under these ranges; what ingot's ops assume beyond
  // them is checked when the program runs.
  options.prefer_deferred_runtime_asserts_over_guards = true;
  ExportedProgram ep = detail::export_flat(&state, fn, in_spec, leaves, options);
  if (!out_text.empty()) {
    ep.out_spec =
        treespec_from_torch(out_text, out_leaf_specs, namedtuples, origin_ + ": out_spec");
  }
  return ep;
}

}  // namespace

bool looks_like_pt2(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[4] = {};
  f.read(magic, 4);
  return f.gcount() == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

ExportedProgram load_pt2(const std::string& path, Pt2Info* info) {
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  Reader r(file->data(), file->size(), path, [&](uint64_t offset, uint64_t nbytes) {
    return Storage::from_mapped_file(file, size_t(offset), size_t(nbytes));
  });
  return r.read(info);
}

ExportedProgram load_pt2_from_bytes(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                    const std::string& origin, Pt2Info* info) {
  Reader r(data, size, origin, [&](uint64_t offset, uint64_t nbytes) {
    return Storage::from_external(const_cast<uint8_t*>(data + offset), size_t(nbytes), owner,
                                  false);
  });
  return r.read(info);
}

}  // namespace ingot::pt2
