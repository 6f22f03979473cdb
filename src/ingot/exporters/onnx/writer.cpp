#include "ingot/exporters/onnx/writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ingot/core/progress.h"
#include "ingot/exporters/onnx/wire.h"

namespace ingot::exporters::onnx {

using wire::Encoder;

namespace {

// Field numbers below are onnx.proto's; each encoder writes in field-number order.

void encode(Encoder& e, const GraphProto& g);

void encode(Encoder& e, const StringEntry& s) {
  if (!s.key.empty()) e.field_string(1, s.key);
  if (!s.value.empty()) e.field_string(2, s.value);
}

void encode(Encoder& e, const TensorProto& t) {
  for (int64_t d : t.dims) e.field_int64(1, d);  // proto2: not packed
  e.field_int32(2, int32_t(t.data_type));
  e.packed_floats(4, t.float_data);
  e.packed_int32s(5, t.int32_data);
  for (const auto& s : t.string_data) e.field_string(6, s);
  e.packed_int64s(7, t.int64_data);
  if (!t.name.empty()) e.field_string(8, t.name);
  if (!t.raw_data.empty()) e.field_bytes(9, t.raw_data.data(), t.raw_data.size());
  e.packed_doubles(10, t.double_data);
  e.packed_uint64s(11, t.uint64_data);
  if (!t.doc_string.empty()) e.field_string(12, t.doc_string);
  for (const auto& s : t.external_data) e.field_message(13, [&](Encoder& m) { encode(m, s); });
  if (t.data_location != DataLocation::Default) e.field_int32(14, int32_t(t.data_location));
}

void encode(Encoder& e, const Dim& d) {
  if (d.is_value()) e.field_int64(1, d.dim_value());
  if (d.is_param()) e.field_string(2, d.dim_param());
}

void encode(Encoder& e, const TensorType& t) {
  e.field_int32(1, int32_t(t.elem_type));
  if (t.shape) {
    e.field_message(2, [&](Encoder& shape) {
      for (const Dim& d : *t.shape) shape.field_message(1, [&](Encoder& m) { encode(m, d); });
    });
  }
}

void encode(Encoder& e, const ValueInfoProto& v) {
  if (!v.name.empty()) e.field_string(1, v.name);
  if (v.type) {
    // TypeProto { tensor_type = 1 }
    e.field_message(
        2, [&](Encoder& type) { type.field_message(1, [&](Encoder& m) { encode(m, *v.type); }); });
  }
  if (!v.doc_string.empty()) e.field_string(3, v.doc_string);
}

void encode(Encoder& e, const AttributeProto& a) {
  if (!a.name.empty()) e.field_string(1, a.name);
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, float>) {
          e.field_float(2, v);
        } else if constexpr (std::is_same_v<V, int64_t>) {
          e.field_int64(3, v);
        } else if constexpr (std::is_same_v<V, std::string>) {
          e.field_string(4, v);
        } else if constexpr (std::is_same_v<V, TensorProto>) {
          e.field_message(5, [&](Encoder& m) { encode(m, v); });
        } else if constexpr (std::is_same_v<V, Box<GraphProto>>) {
          e.field_message(6, [&](Encoder& m) { encode(m, *v); });
        } else if constexpr (std::is_same_v<V, std::vector<float>>) {
          for (float f : v) e.field_float(7, f);  // proto2: not packed
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          for (int64_t i : v) e.field_int64(8, i);
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          for (const auto& s : v) e.field_string(9, s);
        } else if constexpr (std::is_same_v<V, std::vector<TensorProto>>) {
          for (const auto& t : v) e.field_message(10, [&](Encoder& m) { encode(m, t); });
        } else {
          static_assert(std::is_same_v<V, std::vector<GraphProto>>);
          for (const auto& g : v) e.field_message(11, [&](Encoder& m) { encode(m, g); });
        }
      },
      a.value);
  if (!a.doc_string.empty()) e.field_string(13, a.doc_string);
  e.field_int32(20, int32_t(a.type()));
}

void encode(Encoder& e, const NodeProto& n) {
  for (const auto& s : n.input) e.field_string(1, s);
  for (const auto& s : n.output) e.field_string(2, s);
  if (!n.name.empty()) e.field_string(3, n.name);
  if (!n.op_type.empty()) e.field_string(4, n.op_type);
  for (const auto& a : n.attribute) e.field_message(5, [&](Encoder& m) { encode(m, a); });
  if (!n.doc_string.empty()) e.field_string(6, n.doc_string);
  if (!n.domain.empty()) e.field_string(7, n.domain);
}

void encode(Encoder& e, const GraphProto& g) {
  for (const auto& n : g.node) e.field_message(1, [&](Encoder& m) { encode(m, n); });
  if (!g.name.empty()) e.field_string(2, g.name);
  for (const auto& t : g.initializer) e.field_message(5, [&](Encoder& m) { encode(m, t); });
  if (!g.doc_string.empty()) e.field_string(10, g.doc_string);
  for (const auto& v : g.input) e.field_message(11, [&](Encoder& m) { encode(m, v); });
  for (const auto& v : g.output) e.field_message(12, [&](Encoder& m) { encode(m, v); });
  for (const auto& v : g.value_info) e.field_message(13, [&](Encoder& m) { encode(m, v); });
}

void encode(Encoder& e, const OperatorSetId& o) {
  if (!o.domain.empty()) e.field_string(1, o.domain);
  e.field_int64(2, o.version);
}

void encode(Encoder& e, const ModelProto& m) {
  if (m.ir_version != 0) e.field_int64(1, m.ir_version);
  if (!m.producer_name.empty()) e.field_string(2, m.producer_name);
  if (!m.producer_version.empty()) e.field_string(3, m.producer_version);
  if (!m.domain.empty()) e.field_string(4, m.domain);
  if (m.model_version != 0) e.field_int64(5, m.model_version);
  if (!m.doc_string.empty()) e.field_string(6, m.doc_string);
  e.field_message(7, [&](Encoder& g) { encode(g, m.graph); });
  for (const auto& o : m.opset_import) e.field_message(8, [&](Encoder& s) { encode(s, o); });
  for (const auto& p : m.metadata_props) e.field_message(14, [&](Encoder& s) { encode(s, p); });
}

size_t align_up(size_t v, size_t a) {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

// Calls fn(TensorProto&) on every initializer of g and of its subgraphs.
template <typename Graph, typename Fn>
void for_each_initializer(Graph& g, const Fn& fn) {
  for (auto& t : g.initializer) fn(t);
  for (auto& n : g.node) {
    for (auto& a : n.attribute) {
      if (auto* sub = std::get_if<Box<GraphProto>>(&a.value)) for_each_initializer(**sub, fn);
      if (auto* subs = std::get_if<std::vector<GraphProto>>(&a.value))
        for (auto& s : *subs) for_each_initializer(s, fn);
    }
  }
}

void write_file(const std::string& path, const std::vector<std::pair<const void*, size_t>>& parts,
                const char* what) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  INGOT_CHECK(f != nullptr, IoError, "[onnx.save] cannot open {} '{}' for writing: {}", what, path,
              std::strerror(errno));
  int64_t total = 0;
  for (auto [data, n] : parts) total += int64_t(n);
  ProgressLine progress("writing " + path, total);
  for (auto [data, n] : parts) {
    INGOT_CHECK(write_with_progress(f.get(), data, n, progress), IoError,
                "[onnx.save] cannot write {} '{}': {}", what, path, std::strerror(errno));
  }
  INGOT_CHECK(std::fclose(f.release()) == 0, IoError, "[onnx.save] cannot close {} '{}': {}", what,
              path, std::strerror(errno));
}

}  // namespace

std::string serialize_model(const ModelProto& model) {
  Encoder counter(nullptr);
  encode(counter, model);
  INGOT_CHECK(counter.size() <= kMaxProtoBytes, ValueError,
              "[onnx.save] the model would be {} bytes, over protobuf's 2 GiB limit: store the "
              "weights as external data (SaveOptions::external_data_file)",
              counter.size());
  std::string out;
  out.reserve(counter.size());
  Encoder e(&out);
  encode(e, model);
  INGOT_INTERNAL_ASSERT(out.size() == counter.size());
  return out;
}

ModelProto externalize_initializers(const ModelProto& model, const SaveOptions& options,
                                    std::vector<ExternalPiece>& pieces) {
  ModelProto out = model;
  if (options.external_data_file.empty()) return out;
  size_t end = pieces.empty() ? 0 : pieces.back().offset + pieces.back().bytes.size();
  for_each_initializer(out.graph, [&](TensorProto& t) {
    if (t.data_location == DataLocation::External || t.raw_data.size() < options.external_threshold)
      return;
    size_t align =
        t.raw_data.size() >= (size_t(1) << 20) ? options.large_alignment : options.alignment;
    size_t offset = align_up(end, align);
    pieces.push_back({offset, t.raw_data});
    end = offset + t.raw_data.size();
    t.external_data = {{"location", options.external_data_file},
                       {"offset", std::to_string(offset)},
                       {"length", std::to_string(t.raw_data.size())}};
    t.data_location = DataLocation::External;
    t.raw_data = Bytes();
  });
  return out;
}

void save_model(const ModelProto& model, const std::string& path, const SaveOptions& options) {
  INGOT_CHECK(options.external_data_file.find('/') == std::string::npos &&
                  options.external_data_file != "." && options.external_data_file != "..",
              ValueError,
              "[onnx.save] external_data_file '{}' must be a plain file name (it is placed next "
              "to the model)",
              options.external_data_file);
  // A tensor that already refers to external data would point at a file we do not write.
  for_each_initializer(model.graph, [&](const TensorProto& t) {
    INGOT_CHECK(t.data_location != DataLocation::External, ValueError,
                "[onnx.save] initializer '{}' refers to external data in '{}' that is not loaded: "
                "call load_external_data before saving",
                t.name, t.external("location"));
  });
  std::vector<ExternalPiece> pieces;
  ModelProto m = externalize_initializers(model, options, pieces);
  std::string bytes = serialize_model(m);
  write_file(path, {{bytes.data(), bytes.size()}}, "model file");
  if (options.external_data_file.empty()) return;

  std::filesystem::path data_path =
      std::filesystem::path(path).parent_path() / options.external_data_file;
  static const char kZeros[65536] = {};
  std::vector<std::pair<const void*, size_t>> parts;
  size_t pos = 0;
  for (const auto& p : pieces) {
    for (size_t pad = p.offset - pos; pad > 0;) {
      size_t n = std::min(pad, sizeof(kZeros));
      parts.emplace_back(kZeros, n);
      pad -= n;
    }
    parts.emplace_back(p.bytes.data(), p.bytes.size());
    pos = p.offset + p.bytes.size();
  }
  write_file(data_path.string(), parts, "external data file");
}

}  // namespace ingot::exporters::onnx
