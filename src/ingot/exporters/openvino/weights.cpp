#include "ingot/exporters/openvino/weights.h"

#include "ingot/ops/functional.h"

namespace ingot::exporters::openvino {

int64_t compress_to_fp16(Graph& g) {
  int64_t count = 0;
  std::vector<Layer> old = std::move(g.layers());
  g.layers().clear();
  // Old layer id -> new layer id (the Convert for a compressed Const).
  std::vector<int32_t> remap(old.size(), -1);
  std::vector<Layer>& out = g.layers();
  for (size_t i = 0; i < old.size(); ++i) {
    Layer l = std::move(old[i]);
    for (Value& v : l.inputs) v.layer = remap[size_t(v.layer)];
    for (auto& [name, body] : l.bodies) count += compress_to_fp16(*body);
    const bool compress =
        l.type == "Const" && l.data.dtype() == DType::F32 && l.data.numel() >= kCompressMinElements;
    if (!compress) {
      out.push_back(std::move(l));
      remap[i] = int32_t(out.size() - 1);
      continue;
    }
    Layer half = l;
    half.name = l.name + "/compressed";
    half.data = contiguous(to(l.data, DType::F16));
    half.attrs[0].second = "f16";  // element_type
    half.outputs[0].type = DType::F16;
    half.outputs[0].names.clear();
    out.push_back(std::move(half));
    Layer convert;
    convert.name = l.name;
    convert.type = "Convert";
    convert.version = std::string(op_version("Convert"));
    convert.attrs = {{"destination_type", "f32"}};
    convert.rt_info = {{"decompression", ""}};
    convert.inputs = {Value{int32_t(out.size() - 1), 0}};
    convert.outputs = l.outputs;
    out.push_back(std::move(convert));
    remap[i] = int32_t(out.size() - 1);
    ++count;
  }
  g.remap_ids(remap);
  return count;
}

}  // namespace ingot::exporters::openvino
