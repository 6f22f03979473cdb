// libFuzzer target: the ONNX reader must reject any malformed input with an IoError (or
// a NotSupportedError for valid ONNX outside ingot's subset) and never crash, hang or
// read out of bounds. Accepted models are then walked the way a consumer would: every
// tensor's bytes decoded and checked against its dims, and the model re-serialised,
// parsed and serialised again, which must give the same bytes.
#include <cstddef>
#include <cstdint>

#include "ingot/exporters/onnx/reader.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/onnx/writer.h"

namespace onnx = ingot::exporters::onnx;

namespace {

void touch_tensor(const onnx::TensorProto& t) {
  try {
    onnx::Bytes b = onnx::tensor_bytes(t);
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < b.size(); i += 64) sink = sink + b.data()[i];
    if (!b.empty()) sink = sink + b.data()[b.size() - 1];
  } catch (const ingot::IoError&) {
  } catch (const ingot::NotSupportedError&) {
  }
}

void touch_graph(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer) touch_tensor(t);
  for (const auto& n : g.node) {
    for (const auto& a : n.attribute) {
      if (auto* t = std::get_if<onnx::TensorProto>(&a.value)) touch_tensor(*t);
      if (auto* ts = std::get_if<std::vector<onnx::TensorProto>>(&a.value))
        for (const auto& t : *ts) touch_tensor(t);
      if (auto* g2 = std::get_if<onnx::Box<onnx::GraphProto>>(&a.value)) touch_graph(**g2);
      if (auto* gs = std::get_if<std::vector<onnx::GraphProto>>(&a.value))
        for (const auto& g3 : *gs) touch_graph(g3);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto m;
  try {
    m = onnx::parse_model(data, size, "fuzz-input");
  } catch (const ingot::IoError&) {
    return 0;
  } catch (const ingot::NotSupportedError&) {
    return 0;
  }
  touch_graph(m.graph);
  // Whatever the reader accepts, the writer writes and the reader reads back unchanged
  // (compared as bytes: a NaN attribute is not == itself).
  std::string bytes = onnx::serialize_model(m);
  onnx::ModelProto again =
      onnx::parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "rewrite");
  if (onnx::serialize_model(again) != bytes) __builtin_trap();
  return 0;
}
