// save / load of .ingot archives: the program-level JSON (signature, ranges, specs,
// tensor table) and the data section. Graph, expression and pytree codecs live in
// archive_*.cpp; the header in archive_header.cpp. Format: docs/ingot_format.md.
#include "ingot/formats/serialize.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "ingot/core/progress.h"
#include "ingot/core/storage.h"
#include "ingot/formats/archive_codec.h"
#include "ingot/formats/archive_header.h"
#include "ingot/ops/functional.h"

namespace ingot {

namespace {

using archive::Json;
using archive::JsonView;

// The JSON nesting the decoders accept (deeper documents are rejected while parsing,
// before any recursion over them).
constexpr int kMaxJsonDepth = 512;
// Elements of one tensor (far above any model; keeps stride arithmetic in range).
constexpr uint64_t kMaxElements = uint64_t(1) << 48;

// --- saving ------------------------------------------------------------------------------

// One tensor of the data section: the contiguous tensor to write and where.
struct Placed {
  Tensor data;
  uint64_t offset = 0;  // from the start of the data section
};

// Everything save writes: the JSON text and the tensors in data-section order.
struct SavePlan {
  std::string json;
  std::vector<Placed> tensors;
  uint64_t data_length = 0;
};

Json place(const std::string& what, const Tensor& t, SavePlan& plan) {
  INGOT_CHECK(t.defined() && t.has_storage(), ValueError,
              "[save] {} has no data; only programs with "
              "materialised state can be saved",
              what);
  Tensor c = contiguous(t);
  const uint64_t offset = plan.data_length;
  plan.data_length = archive::align_up(offset + c.nbytes());
  plan.tensors.push_back({c, offset});
  return Json{{"dtype", std::string(dtype_name(c.dtype()))},
              {"sizes", c.sizes()},
              {"offset", offset},
              {"nbytes", uint64_t(c.nbytes())}};
}

Json range_to_json(const SymbolRange& r) {
  auto end = [](int64_t v) {
    return v == sym::ValueRange::kNegInf || v == sym::ValueRange::kPosInf ? Json(nullptr) : Json(v);
  };
  return Json{{"min", end(r.range.lo)}, {"max", end(r.range.hi)}, {"backed", r.backed}};
}

SavePlan plan_archive(const ExportedProgram& ep) {
  INGOT_CHECK(ep.graph != nullptr, ValueError, "[save] the program has no graph");
  SavePlan plan;
  Json doc;
  doc["ingot_version"] = ep.ingot_version;
  Json ranges = Json::object();
  for (const auto& [name, r] : ep.range_constraints) ranges[name] = range_to_json(r);
  doc["range_constraints"] = std::move(ranges);
  doc["graph"] = archive::graph_to_json(*ep.graph);
  Json ins = Json::array(), outs = Json::array();
  for (const InputSpec& i : ep.signature.inputs) {
    ins.push_back({{"kind", input_kind_name(i.kind)},
                   {"name", i.name},
                   {"target", i.target},
                   {"persistent", i.persistent}});
  }
  for (const OutputSpec& o : ep.signature.outputs) {
    outs.push_back({{"kind", output_kind_name(o.kind)}, {"name", o.name}, {"target", o.target}});
  }
  doc["signature"] = Json{{"inputs", std::move(ins)}, {"outputs", std::move(outs)}};
  doc["in_spec"] = archive::tree_spec_to_json(ep.in_spec);
  doc["out_spec"] = archive::tree_spec_to_json(ep.out_spec);
  doc["input_names"] = ep.input_names;
  doc["guards"] = ep.guards;
  Json state = Json::object(), constants = Json::object(), examples = Json::array();
  for (const auto& [name, t] : ep.state)
    state[name] = place(fmt::format("state '{}'", name), t, plan);
  for (const auto& [name, t] : ep.constants)
    constants[name] = place(fmt::format("constant '{}'", name), t, plan);
  for (size_t i = 0; i < ep.example_inputs.size(); ++i) {
    examples.push_back(place(fmt::format("example input {}", i), ep.example_inputs[i], plan));
  }
  doc["tensors"] = Json{{"state", std::move(state)},
                        {"constants", std::move(constants)},
                        {"example_inputs", std::move(examples)}};
  plan.json = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  return plan;
}

// Streams the archive of `plan` through `write` (header, JSON, padding, tensors).
void write_archive(const SavePlan& plan, const std::function<void(const void*, size_t)>& write) {
  archive::Header h;
  h.json_offset = archive::kHeaderSize;
  h.json_length = plan.json.size();
  h.data_offset = archive::align_up(h.json_offset + h.json_length);
  h.data_length = plan.data_length;
  static const char kZeros[archive::kAlignment] = {};
  const std::string header = archive::encode_archive_header(h);
  write(header.data(), header.size());
  write(plan.json.data(), plan.json.size());
  write(kZeros, h.data_offset - (h.json_offset + h.json_length));
  uint64_t pos = 0;
  for (const Placed& p : plan.tensors) {
    write(kZeros, p.offset - pos);
    write(p.data.raw_data(), p.data.nbytes());
    pos = p.offset + p.data.nbytes();
  }
  write(kZeros, plan.data_length - pos);
}

// --- loading -----------------------------------------------------------------------------

InputKind input_kind_from(const JsonView& v) {
  for (InputKind k :
       {InputKind::UserInput, InputKind::Parameter, InputKind::Buffer, InputKind::ConstantTensor}) {
    if (v.as_string() == input_kind_name(k)) return k;
  }
  v.fail("unknown input kind '{}' (expected USER_INPUT, PARAMETER, BUFFER or CONSTANT_TENSOR)",
         v.as_string());
}

OutputKind output_kind_from(const JsonView& v) {
  for (OutputKind k :
       {OutputKind::UserOutput, OutputKind::BufferMutation, OutputKind::UserInputMutation}) {
    if (v.as_string() == output_kind_name(k)) return k;
  }
  v.fail("unknown output kind '{}' (expected USER_OUTPUT, BUFFER_MUTATION or USER_INPUT_MUTATION)",
         v.as_string());
}

SymbolRange range_from_json(const JsonView& v) {
  SymbolRange r;
  if (auto lo = v.find("min"))
    r.range.lo = lo->as_int();
  else
    v.get("min");  // present (null = unbounded) or a "missing key" error
  if (auto hi = v.find("max"))
    r.range.hi = hi->as_int();
  else
    v.get("max");
  r.backed = v.get("backed").as_bool();
  if (r.range.empty()) v.fail("empty range [{}, {}]", r.range.lo, r.range.hi);
  return r;
}

// Reads the tensor table and makes each entry a view of the data section.
class TensorTable {
 public:
  using Region = std::function<std::shared_ptr<Storage>(uint64_t offset, uint64_t nbytes)>;
  TensorTable(uint64_t data_length, Region region)
      : data_length_(data_length), region_(std::move(region)) {}

  Tensor read(const JsonView& v) {
    const DType dtype = archive::dtype_from_json(v.get("dtype"));
    IntShape sizes;
    uint64_t numel = 1, span = 1;  // span ignores zero sizes: strides must fit in int64 too
    for (const JsonView& s : v.get("sizes").elements()) {
      const int64_t n = s.as_int();
      if (n < 0) s.fail("negative size {}", n);
      if (__builtin_mul_overflow(span, uint64_t(std::max<int64_t>(n, 1)), &span) ||
          span > kMaxElements) {
        s.fail("the sizes describe more than 2^48 elements");
      }
      numel *= uint64_t(n);
      sizes.push_back(n);
    }
    const uint64_t expected = numel * uint64_t(itemsize(dtype));
    const uint64_t offset = v.get("offset").as_uint();
    const uint64_t nbytes = v.get("nbytes").as_uint();
    if (nbytes != expected) {
      v.get("nbytes").fail("{} bytes stored for {}{} ({} bytes expected)", nbytes,
                           dtype_name(dtype), shape_str(sizes), expected);
    }
    if (offset % archive::kAlignment != 0) {
      v.get("offset").fail("offset {} is not a multiple of {}", offset, archive::kAlignment);
    }
    if (offset > data_length_ || nbytes > data_length_ - offset) {
      v.fail("bytes [{}, +{}) lie outside the data section ({} bytes)", offset, nbytes,
             data_length_);
    }
    if (nbytes > 0) extents_.push_back({offset, nbytes, v.path()});
    return Tensor::from_storage(region_(offset, nbytes), dtype, sizes, contiguous_strides(sizes),
                                0);
  }

  // Throws when two tensors share bytes (a corrupt table; save never writes one).
  void check_overlaps(const JsonView& doc) {
    std::sort(extents_.begin(), extents_.end(),
              [](const Extent& a, const Extent& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < extents_.size(); ++i) {
      const Extent& a = extents_[i - 1];
      const Extent& b = extents_[i];
      if (b.offset < a.offset + a.nbytes) {
        doc.get("tensors").fail("the bytes of {} [{}, +{}) overlap those of {} [{}, +{})", b.path,
                                b.offset, b.nbytes, a.path, a.offset, a.nbytes);
      }
    }
  }

 private:
  struct Extent {
    uint64_t offset, nbytes;
    std::string path;
  };
  uint64_t data_length_;
  Region region_;
  std::vector<Extent> extents_;
};

// A state or constant tensor must fit the graph input it feeds.
void check_fits(const JsonView& where, const Tensor& t, const ir::ValueInfo& v,
                const std::string& target) {
  bool ok = v.is_tensor() && t.dtype() == v.dtype && size_t(t.dim()) == v.sizes.size();
  for (size_t d = 0; ok && d < v.sizes.size(); ++d) {
    if (v.sizes[d].is_integer()) ok = v.sizes[d].value() == t.size(int64_t(d));
  }
  if (!ok) {
    where.fail("tensor '{}' is {}{}, its graph input '{}' is {}", target, dtype_name(t.dtype()),
               t.shape_string(), v.name, ir::meta_str(v));
  }
}

void check_signature(const ExportedProgram& ep, const JsonView& doc) {
  const ir::Graph& g = *ep.graph;
  JsonView sig = doc.get("signature");
  if (ep.signature.inputs.size() != g.inputs.size()) {
    sig.get("inputs").fail("{} inputs listed, the graph has {}", ep.signature.inputs.size(),
                           g.inputs.size());
  }
  if (ep.signature.outputs.size() != g.outputs.size()) {
    sig.get("outputs").fail("{} outputs listed, the graph has {}", ep.signature.outputs.size(),
                            g.outputs.size());
  }
  size_t user_inputs = 0, user_outputs = 0;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const InputSpec& in = ep.signature.inputs[i];
    const ir::ValueInfo& v = g.value(g.inputs[i]);
    JsonView at = sig.get("inputs").at(i);
    if (in.name != v.name) at.fail("names '{}', the graph input is '{}'", in.name, v.name);
    if (in.kind == InputKind::UserInput) ++user_inputs;
    if (in.kind == InputKind::Parameter || in.kind == InputKind::Buffer) {
      auto it = ep.state.find(in.target);
      if (it == ep.state.end()) at.fail("state tensor '{}' is not in tensors.state", in.target);
      check_fits(at, it->second, v, in.target);
    }
    if (in.kind == InputKind::ConstantTensor) {
      auto it = ep.constants.find(in.target);
      if (it == ep.constants.end()) at.fail("constant '{}' is not in tensors.constants", in.target);
      check_fits(at, it->second, v, in.target);
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const OutputSpec& out = ep.signature.outputs[i];
    JsonView at = sig.get("outputs").at(i);
    if (out.name != g.value(g.outputs[i]).name)
      at.fail("names '{}', the graph output is '{}'", out.name, g.value(g.outputs[i]).name);
    if (!g.value(g.outputs[i]).is_tensor()) at.fail("output '{}' is not a tensor", out.name);
    if (out.kind == OutputKind::UserOutput) {
      ++user_outputs;
      continue;
    }
    const InputKind want =
        out.kind == OutputKind::BufferMutation ? InputKind::Buffer : InputKind::UserInput;
    bool found = false;
    for (const InputSpec& in : ep.signature.inputs)
      found = found || (in.kind == want && in.target == out.target);
    if (!found) at.fail("updates '{}', which is not a {} input", out.target, input_kind_name(want));
  }
  auto tensor_leaves = [](const TreeSpec& s) {
    size_t n = 0;
    std::function<void(const TreeSpec&)> walk = [&](const TreeSpec& t) {
      n += t.type == "tensor";
      for (const TreeSpec& c : t.children) walk(c);
    };
    walk(s);
    return n;
  };
  if (tensor_leaves(ep.in_spec) != user_inputs) {
    doc.get("in_spec").fail("has {} tensor leaves, the signature {} user inputs",
                            tensor_leaves(ep.in_spec), user_inputs);
  }
  if (tensor_leaves(ep.out_spec) != user_outputs) {
    doc.get("out_spec")
        .fail("has {} tensor leaves, the signature {} user outputs", tensor_leaves(ep.out_spec),
              user_outputs);
  }
  if (!ep.example_inputs.empty() && ep.example_inputs.size() != user_inputs) {
    doc.get("tensors")
        .get("example_inputs")
        .fail("{} example inputs for {} user inputs", ep.example_inputs.size(), user_inputs);
  }
}

ExportedProgram decode_program(const JsonView& doc, TensorTable& table) {
  ExportedProgram ep;
  ep.ingot_version = doc.get("ingot_version").as_string();
  std::set<std::string> symbols;
  for (const auto& [name, r] : doc.get("range_constraints").members()) {
    if (name.empty()) r.fail("a symbol needs a name");
    ep.range_constraints[name] = range_from_json(r);
    symbols.insert(name);
  }
  ep.graph = archive::graph_from_json(doc.get("graph"), symbols);
  JsonView sig = doc.get("signature");
  for (const JsonView& i : sig.get("inputs").elements()) {
    ep.signature.inputs.push_back({input_kind_from(i.get("kind")), i.get("name").as_string(),
                                   i.get("target").as_string(), i.get("persistent").as_bool()});
  }
  for (const JsonView& o : sig.get("outputs").elements()) {
    ep.signature.outputs.push_back(
        {output_kind_from(o.get("kind")), o.get("name").as_string(), o.get("target").as_string()});
  }
  ep.in_spec = archive::tree_spec_from_json(doc.get("in_spec"));
  ep.out_spec = archive::tree_spec_from_json(doc.get("out_spec"));
  for (const JsonView& n : doc.get("input_names").elements())
    ep.input_names.push_back(n.as_string());
  for (const JsonView& g : doc.get("guards").elements()) ep.guards.push_back(g.as_string());
  JsonView tensors = doc.get("tensors");
  for (const auto& [name, t] : tensors.get("state").members())
    ep.state.emplace(name, table.read(t));
  for (const auto& [name, t] : tensors.get("constants").members())
    ep.constants.emplace(name, table.read(t));
  for (const JsonView& t : tensors.get("example_inputs").elements())
    ep.example_inputs.push_back(table.read(t));
  table.check_overlaps(doc);
  check_signature(ep, doc);
  try {
    ep.verify();
  } catch (const InternalError& e) {
    doc.fail("the program fails verification: {}", e.what());
  }
  return ep;
}

ExportedProgram load_archive(const uint8_t* data, size_t size, const std::string& origin,
                             const TensorTable::Region& region) {
  const archive::Header h = archive::decode_archive_header(data, size, origin);
  const char* text = reinterpret_cast<const char*>(data + h.json_offset);
  Json doc;
  try {
    // Reject deep nesting while parsing, so nothing later recurses without bound.
    Json::parser_callback_t limit = [&](int depth, Json::parse_event_t, Json&) {
      INGOT_CHECK(depth <= kMaxJsonDepth, IoError,
                  "[load] '{}': the JSON section nests deeper than {} levels", origin,
                  kMaxJsonDepth);
      return true;
    };
    doc = Json::parse(text, text + h.json_length, limit);
  } catch (const Json::exception& e) {
    INGOT_THROW(IoError, "[load] '{}': the JSON section is not valid JSON: {}", origin, e.what());
  }
  JsonView root(doc, "", origin);
  if (!doc.is_object()) root.fail("expected an object, got {}", archive::json_kind_name(doc));
  TensorTable table(h.data_length, [&](uint64_t offset, uint64_t nbytes) {
    return region(h.data_offset + offset, nbytes);
  });
  try {
    return decode_program(root, table);
  } catch (const IoError&) {
    throw;
  } catch (const NotSupportedError&) {
    throw;
  } catch (const Error& e) {
    INGOT_THROW(IoError, "[load] '{}': {}", origin, e.what());
  }
}

}  // namespace

std::string save_to_bytes(const ExportedProgram& program) {
  const SavePlan plan = plan_archive(program);
  std::string out;
  write_archive(plan, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

void save(const ExportedProgram& program, const std::string& path) {
  const SavePlan plan = plan_archive(program);
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  INGOT_CHECK(f != nullptr, IoError, "[save] cannot create '{}': {}", tmp, std::strerror(errno));
  bool ok = true;
  ProgressLine progress("writing " + path, int64_t(plan.data_length + plan.json.size()));
  write_archive(
      plan, [&](const void* p, size_t n) { ok = ok && write_with_progress(f, p, n, progress); });
  const int err = ok ? 0 : errno;
  if (std::fclose(f) != 0) ok = false;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = err ? err : errno;
    std::remove(tmp.c_str());
    INGOT_THROW(IoError, "[save] cannot write '{}': {}", path, std::strerror(e));
  }
}

ExportedProgram load(const std::string& path) {
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  return load_archive(file->data(), file->size(), path, [&](uint64_t offset, uint64_t nbytes) {
    return Storage::from_mapped_file(file, size_t(offset), size_t(nbytes));
  });
}

ExportedProgram load_from_bytes(const uint8_t* data, size_t size, std::shared_ptr<void> owner,
                                const std::string& origin) {
  return load_archive(data, size, origin, [&](uint64_t offset, uint64_t nbytes) {
    return Storage::from_external(const_cast<uint8_t*>(data + offset), size_t(nbytes), owner,
                                  false);
  });
}

}  // namespace ingot
