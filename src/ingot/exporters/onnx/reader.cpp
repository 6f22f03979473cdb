#include "ingot/exporters/onnx/reader.h"

#include <exception>
#include <filesystem>
#include <map>
#include <utility>

#include "ingot/core/storage.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/onnx/wire.h"

namespace ingot::exporters::onnx {

using wire::Decoder;
using wire::WireError;
using wire::WireType;

namespace {

// Parses one ModelProto. Every message parser reads fields until its decoder is done;
// `path_` records where it is, so an error names the field at fault.
class Parser {
 public:
  Parser(std::string origin, std::shared_ptr<const void> keep_alive)
      : origin_(std::move(origin)), keep_alive_(std::move(keep_alive)) {}

  ModelProto parse(const uint8_t* data, size_t size) {
    try {
      Decoder d(data, size);
      return model(d);
    } catch (const WireError& e) {
      INGOT_THROW(IoError, "[onnx.load] {}: {}{}", origin_, where(), e.what());
    } catch (const NotSupportedError& e) {
      INGOT_THROW(NotSupportedError, "[onnx.load] {}: {}{}", origin_, where(), e.what());
    }
  }

 private:
  // --- error context ------------------------------------------------------------
  struct Step {
    const char* field;
    int64_t index;      // -1: not a repeated field
    std::string label;  // a name that helps find it ("then_branch"), may be empty
  };

  // Pushes a path step; pops it again unless an exception is leaving the scope, so a
  // catch at the top still sees where parsing stopped.
  class Scope {
   public:
    Scope(Parser& p, const char* field, int64_t index) : p_(p) {
      p_.path_.push_back({field, index, {}});
    }
    ~Scope() {
      if (std::uncaught_exceptions() == exceptions_) p_.path_.pop_back();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Parser& p_;
    int exceptions_ = std::uncaught_exceptions();
  };

  std::string where() const {
    std::string s;
    for (const auto& step : path_) {
      if (!s.empty()) s += '.';
      s += step.field;
      if (step.index >= 0) s += fmt::format("[{}]", step.index);
      if (!step.label.empty()) s += fmt::format(" ({})", step.label);
    }
    return s.empty() ? s : s + ": ";
  }
  void label(const std::string& name) {
    if (!path_.empty()) path_.back().label = name;
  }

  [[noreturn]] static void unsupported(const char* message, uint32_t field) {
    INGOT_THROW(NotSupportedError,
                "{} (field {}) is not supported by ingot's ONNX reader (see "
                "src/ingot/exporters/onnx/model.h for the subset it reads)",
                message, field);
  }

  static void expect(const Decoder::Tag& tag, WireType want, const char* name) {
    if (tag.type != want) {
      throw WireError(fmt::format("field '{}' ({}) has wire type {}, expected {}", name, tag.field,
                                  wire::wire_type_name(tag.type), wire::wire_type_name(want)));
    }
  }
  static std::string str(Decoder& d, const Decoder::Tag& tag, const char* name) {
    expect(tag, WireType::Len, name);
    return std::string(d.bytes());
  }
  static int64_t i64(Decoder& d, const Decoder::Tag& tag, const char* name) {
    expect(tag, WireType::Varint, name);
    return int64_t(d.varint());
  }
  static int32_t i32(Decoder& d, const Decoder::Tag& tag, const char* name) {
    return int32_t(uint32_t(uint64_t(i64(d, tag, name))));  // protobuf keeps the low 32 bits
  }
  static Decoder sub(Decoder& d, const Decoder::Tag& tag, const char* name) {
    expect(tag, WireType::Len, name);
    std::string_view s = d.bytes();
    return Decoder(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }

  // --- messages ------------------------------------------------------------------
  StringEntry string_entry(Decoder d) {
    StringEntry e;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        e.key = str(d, t, "key");
      } else if (t.field == 2) {
        e.value = str(d, t, "value");
      } else {
        d.skip(t.type);
      }
    }
    return e;
  }

  TensorProto tensor(Decoder d) {
    TensorProto t;
    size_t n_external = 0;
    while (!d.done()) {
      auto tag = d.tag();
      switch (tag.field) {
        case 1: wire::read_repeated_int64s(d, tag.type, t.dims); break;
        case 2: {
          int32_t v = i32(d, tag, "data_type");
          if (v < 0 || v > kMaxDataType) {
            throw WireError(fmt::format("data_type {} is not an ONNX element type", v));
          }
          t.data_type = DataType(v);
          break;
        }
        case 3: unsupported("a tensor segment", tag.field);
        case 4: wire::read_repeated_floats(d, tag.type, t.float_data); break;
        case 5: wire::read_repeated_int32s(d, tag.type, t.int32_data); break;
        case 6: t.string_data.push_back(str(d, tag, "string_data")); break;
        case 7: wire::read_repeated_int64s(d, tag.type, t.int64_data); break;
        case 8: t.name = str(d, tag, "name"); break;
        case 9: {
          expect(tag, WireType::Len, "raw_data");
          std::string_view s = d.bytes();
          t.raw_data = keep_alive_ ? Bytes::view(s.data(), s.size(), keep_alive_)
                                   : Bytes::copy_of(s.data(), s.size());
          break;
        }
        case 10: wire::read_repeated_doubles(d, tag.type, t.double_data); break;
        case 11: wire::read_repeated_uint64s(d, tag.type, t.uint64_data); break;
        case 12: t.doc_string = str(d, tag, "doc_string"); break;
        case 13: {
          Scope s(*this, "external_data", int64_t(n_external++));
          t.external_data.push_back(string_entry(sub(d, tag, "external_data")));
          break;
        }
        case 14: {
          int32_t v = i32(d, tag, "data_location");
          if (v != 0 && v != 1) throw WireError(fmt::format("data_location {} is not 0 or 1", v));
          t.data_location = DataLocation(v);
          break;
        }
        default: d.skip(tag.type);
      }
    }
    return t;
  }

  Dim dim(Decoder d) {
    Dim out;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        out.value = i64(d, t, "dim_value");
      } else if (t.field == 2) {
        out.value = str(d, t, "dim_param");
      } else {
        d.skip(t.type);  // denotation
      }
    }
    return out;
  }

  std::vector<Dim> shape(Decoder d) {
    std::vector<Dim> dims;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        Scope s(*this, "dim", int64_t(dims.size()));
        dims.push_back(dim(sub(d, t, "dim")));
      } else {
        d.skip(t.type);
      }
    }
    return dims;
  }

  TensorType tensor_type(Decoder d) {
    TensorType tt;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        int32_t v = i32(d, t, "elem_type");
        if (v < 0 || v > kMaxDataType) {
          throw WireError(fmt::format("elem_type {} is not an ONNX element type", v));
        }
        tt.elem_type = DataType(v);
      } else if (t.field == 2) {
        Scope s(*this, "shape", -1);
        tt.shape = shape(sub(d, t, "shape"));
      } else {
        d.skip(t.type);
      }
    }
    return tt;
  }

  TensorType type_proto(Decoder d) {
    std::optional<TensorType> tt;
    while (!d.done()) {
      auto t = d.tag();
      switch (t.field) {
        case 1: {
          Scope s(*this, "tensor_type", -1);
          tt = tensor_type(sub(d, t, "tensor_type"));
          break;
        }
        case 4: unsupported("a sequence type", t.field);
        case 5: unsupported("a map type", t.field);
        case 7: unsupported("an opaque type", t.field);
        case 8: unsupported("a sparse tensor type", t.field);
        case 9: unsupported("an optional type", t.field);
        default: d.skip(t.type);
      }
    }
    if (!tt) throw WireError("type has no tensor_type");
    return *tt;
  }

  ValueInfoProto value_info(Decoder d) {
    ValueInfoProto v;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        v.name = str(d, t, "name");
        label(v.name);
      } else if (t.field == 2) {
        Scope s(*this, "type", -1);
        v.type = type_proto(sub(d, t, "type"));
      } else if (t.field == 3) {
        v.doc_string = str(d, t, "doc_string");
      } else {
        d.skip(t.type);
      }
    }
    return v;
  }

  AttributeProto attribute(Decoder d, int depth) {
    AttributeProto a;
    int32_t declared = 0;       // AttributeType; 0 when the type field is absent
    std::vector<int32_t> seen;  // value kinds whose field appeared
    float f = 0;
    int64_t i = 0;
    std::string s;
    std::optional<TensorProto> t;
    std::optional<GraphProto> g;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::vector<TensorProto> tensors;
    std::vector<GraphProto> graphs;
    auto saw = [&](AttributeType k) { seen.push_back(int32_t(k)); };
    while (!d.done()) {
      auto tag = d.tag();
      switch (tag.field) {
        case 1:
          a.name = str(d, tag, "name");
          label(a.name);
          break;
        case 2:
          expect(tag, WireType::Fixed32, "f");
          f = d.float32();
          saw(AttributeType::Float);
          break;
        case 3:
          i = i64(d, tag, "i");
          saw(AttributeType::Int);
          break;
        case 4:
          s = str(d, tag, "s");
          saw(AttributeType::String);
          break;
        case 5: {
          Scope sc(*this, "t", -1);
          t = tensor(sub(d, tag, "t"));
          saw(AttributeType::Tensor);
          break;
        }
        case 6: {
          Scope sc(*this, "g", -1);
          g = graph(sub(d, tag, "g"), depth + 1);
          saw(AttributeType::Graph);
          break;
        }
        case 7:
          wire::read_repeated_floats(d, tag.type, floats);
          saw(AttributeType::Floats);
          break;
        case 8:
          wire::read_repeated_int64s(d, tag.type, ints);
          saw(AttributeType::Ints);
          break;
        case 9:
          strings.push_back(str(d, tag, "strings"));
          saw(AttributeType::Strings);
          break;
        case 10: {
          Scope sc(*this, "tensors", int64_t(tensors.size()));
          tensors.push_back(tensor(sub(d, tag, "tensors")));
          saw(AttributeType::Tensors);
          break;
        }
        case 11: {
          Scope sc(*this, "graphs", int64_t(graphs.size()));
          graphs.push_back(graph(sub(d, tag, "graphs"), depth + 1));
          saw(AttributeType::Graphs);
          break;
        }
        case 13: a.doc_string = str(d, tag, "doc_string"); break;
        case 14:
        case 15: unsupported("a type-proto attribute", tag.field);
        case 20: declared = i32(d, tag, "type"); break;
        case 21: unsupported("an attribute reference (ref_attr_name, for functions)", tag.field);
        case 22:
        case 23: unsupported("a sparse-tensor attribute", tag.field);
        default: d.skip(tag.type);
      }
    }
    if (declared == 0) {
      // Files from before IR version 2 may omit `type`: it is the one value field set.
      if (seen.empty()) throw WireError("attribute has neither a type nor a value");
      declared = seen.front();
    }
    if (declared == 11 || declared == 12) unsupported("a sparse-tensor attribute", 20);
    if (declared == 13 || declared == 14) unsupported("a type-proto attribute", 20);
    if (declared < 1 || declared > 10) {
      throw WireError(fmt::format("attribute type {} is not an AttributeType", declared));
    }
    for (int32_t k : seen) {
      if (k != declared) {
        throw WireError(fmt::format("attribute of type {} also sets the field of type {}",
                                    attribute_type_name(AttributeType(declared)),
                                    attribute_type_name(AttributeType(k))));
      }
    }
    auto kind = AttributeType(declared);
    bool scalar = declared <= int32_t(AttributeType::Graph);
    if (scalar && seen.empty()) {
      throw WireError(fmt::format("attribute of type {} has no value", attribute_type_name(kind)));
    }
    switch (kind) {
      case AttributeType::Float: a.value = f; break;
      case AttributeType::Int: a.value = i; break;
      case AttributeType::String: a.value = std::move(s); break;
      case AttributeType::Tensor: a.value = std::move(*t); break;
      case AttributeType::Graph: a.value = Box<GraphProto>(std::move(*g)); break;
      case AttributeType::Floats: a.value = std::move(floats); break;
      case AttributeType::Ints: a.value = std::move(ints); break;
      case AttributeType::Strings: a.value = std::move(strings); break;
      case AttributeType::Tensors: a.value = std::move(tensors); break;
      case AttributeType::Graphs: a.value = std::move(graphs); break;
      case AttributeType::Undefined: break;
    }
    return a;
  }

  NodeProto node(Decoder d, int depth) {
    NodeProto n;
    while (!d.done()) {
      auto t = d.tag();
      switch (t.field) {
        case 1: n.input.push_back(str(d, t, "input")); break;
        case 2: n.output.push_back(str(d, t, "output")); break;
        case 3:
          n.name = str(d, t, "name");
          label(n.name);
          break;
        case 4:
          n.op_type = str(d, t, "op_type");
          if (n.name.empty()) label(n.op_type);
          break;
        case 5: {
          Scope s(*this, "attribute", int64_t(n.attribute.size()));
          n.attribute.push_back(attribute(sub(d, t, "attribute"), depth));
          break;
        }
        case 6: n.doc_string = str(d, t, "doc_string"); break;
        case 7: n.domain = str(d, t, "domain"); break;
        default: d.skip(t.type);
      }
    }
    return n;
  }

  GraphProto graph(Decoder d, int depth) {
    if (depth > kMaxGraphDepth) {
      throw WireError(fmt::format("subgraphs nest deeper than {} levels", kMaxGraphDepth));
    }
    GraphProto g;
    while (!d.done()) {
      auto t = d.tag();
      switch (t.field) {
        case 1: {
          Scope s(*this, "node", int64_t(g.node.size()));
          g.node.push_back(node(sub(d, t, "node"), depth));
          break;
        }
        case 2: g.name = str(d, t, "name"); break;
        case 5: {
          Scope s(*this, "initializer", int64_t(g.initializer.size()));
          g.initializer.push_back(tensor(sub(d, t, "initializer")));
          break;
        }
        case 10: g.doc_string = str(d, t, "doc_string"); break;
        case 11: {
          Scope s(*this, "input", int64_t(g.input.size()));
          g.input.push_back(value_info(sub(d, t, "input")));
          break;
        }
        case 12: {
          Scope s(*this, "output", int64_t(g.output.size()));
          g.output.push_back(value_info(sub(d, t, "output")));
          break;
        }
        case 13: {
          Scope s(*this, "value_info", int64_t(g.value_info.size()));
          g.value_info.push_back(value_info(sub(d, t, "value_info")));
          break;
        }
        case 15: unsupported("a sparse initializer", t.field);
        default: d.skip(t.type);
      }
    }
    return g;
  }

  OperatorSetId opset(Decoder d) {
    OperatorSetId o;
    while (!d.done()) {
      auto t = d.tag();
      if (t.field == 1) {
        o.domain = str(d, t, "domain");
      } else if (t.field == 2) {
        o.version = i64(d, t, "version");
      } else {
        d.skip(t.type);
      }
    }
    return o;
  }

  ModelProto model(Decoder& d) {
    ModelProto m;
    bool has_graph = false;
    while (!d.done()) {
      auto t = d.tag();
      switch (t.field) {
        case 1: m.ir_version = i64(d, t, "ir_version"); break;
        case 2: m.producer_name = str(d, t, "producer_name"); break;
        case 3: m.producer_version = str(d, t, "producer_version"); break;
        case 4: m.domain = str(d, t, "domain"); break;
        case 5: m.model_version = i64(d, t, "model_version"); break;
        case 6: m.doc_string = str(d, t, "doc_string"); break;
        case 7: {
          Scope s(*this, "graph", -1);
          m.graph = graph(sub(d, t, "graph"), 0);
          has_graph = true;
          break;
        }
        case 8: {
          Scope s(*this, "opset_import", int64_t(m.opset_import.size()));
          m.opset_import.push_back(opset(sub(d, t, "opset_import")));
          break;
        }
        case 14: {
          Scope s(*this, "metadata_props", int64_t(m.metadata_props.size()));
          m.metadata_props.push_back(string_entry(sub(d, t, "metadata_props")));
          break;
        }
        case 20: unsupported("training_info", t.field);
        case 25: unsupported("model-local functions", t.field);
        default: d.skip(t.type);
      }
    }
    if (!has_graph) throw WireError("the model has no graph (is this an ONNX model file?)");
    return m;
  }

  std::string origin_;
  std::shared_ptr<const void> keep_alive_;
  std::vector<Step> path_;
};

// Calls fn(TensorProto&, const std::string& where) on every tensor of g: initializers,
// tensor attributes, and those of every subgraph.
template <typename Fn>
void for_each_tensor(GraphProto& g, const std::string& where, const Fn& fn) {
  for (auto& t : g.initializer) fn(t, where + ".initializer '" + t.name + "'");
  for (auto& n : g.node) {
    for (auto& a : n.attribute) {
      std::string at = where + ".node '" + (n.name.empty() ? n.op_type : n.name) + "'." + a.name;
      if (auto* t = std::get_if<TensorProto>(&a.value)) fn(*t, at);
      if (auto* ts = std::get_if<std::vector<TensorProto>>(&a.value))
        for (auto& t : *ts) fn(t, at);
      if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) for_each_tensor(**sub, at, fn);
      if (auto* subs = std::get_if<std::vector<GraphProto>>(&a.value))
        for (auto& s : *subs) for_each_tensor(s, at, fn);
    }
  }
}

// Parses a non-negative decimal integer of an external_data value.
size_t parse_size(const std::string& s, const std::string& key, const std::string& where) {
  INGOT_CHECK(
      !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos,
      IoError, "[onnx.load] {}: external_data {} '{}' is not a non-negative integer", where, key,
      s);
  return size_t(std::stoull(s));
}

}  // namespace

ModelProto parse_model(const uint8_t* data, size_t size, const std::string& origin,
                       std::shared_ptr<const void> keep_alive) {
  return Parser(origin, std::move(keep_alive)).parse(data, size);
}

ModelProto load_model(const std::string& path, bool load_external) {
  std::shared_ptr<MappedFile> file = MappedFile::open(path);
  ModelProto m = parse_model(file->data(), file->size(), path, file);
  if (load_external) {
    load_external_data(m, std::filesystem::path(path).parent_path().string());
  }
  return m;
}

void load_external_data(ModelProto& model, const std::string& base_dir) {
  std::map<std::string, std::shared_ptr<MappedFile>> files;
  for_each_tensor(model.graph, "graph", [&](TensorProto& t, const std::string& where) {
    if (t.data_location != DataLocation::External) return;
    std::string location = t.external("location");
    INGOT_CHECK(!location.empty(), IoError,
                "[onnx.load] {}: stored as external data but has no 'location' entry", where);
    std::filesystem::path rel(location);
    bool escapes = rel.is_absolute();
    for (const auto& part : rel) escapes = escapes || part == "..";
    INGOT_CHECK(!escapes, IoError,
                "[onnx.load] {}: external data location '{}' must be a relative path inside the "
                "model's folder",
                where, location);
    auto& file = files[location];
    if (!file) file = MappedFile::open((std::filesystem::path(base_dir) / rel).string());
    std::string offset_s = t.external("offset");
    std::string length_s = t.external("length");
    size_t offset = offset_s.empty() ? 0 : parse_size(offset_s, "offset", where);
    size_t expected = tensor_nbytes(t, where);
    size_t length = length_s.empty() ? expected : parse_size(length_s, "length", where);
    INGOT_CHECK(length == expected, IoError,
                "[onnx.load] {}: external data length {} does not match its {} {} elements "
                "({} bytes)",
                where, length, data_type_name(t.data_type), tensor_numel(t, where), expected);
    INGOT_CHECK(offset <= file->size() && length <= file->size() - offset, IoError,
                "[onnx.load] {}: external data [{}, {}) lies outside '{}' ({} bytes)", where,
                offset, offset + length, file->path(), file->size());
    t.raw_data = Bytes::view(file->data() + offset, length, file);
    t.external_data.clear();
    t.data_location = DataLocation::Default;
  });
}

}  // namespace ingot::exporters::onnx
