// Writing an OpenVINO IR v11 model: `<name>.xml` (layers with their ports' element types
// and dims, edges, opset versions, rt_info) and `<name>.bin` (every Const's bytes, each
// starting at a multiple of kWeightAlignment so a reader can map them in place).
//
//   openvino::save_model(model, "out/openvino_model.xml");   // + out/openvino_model.bin
//
// The bytes are streamed from the tensors' own storage (no copy of the weights). Both
// files are written to temporary names in the target directory and renamed at the end,
// the .xml last: a failed save leaves no file behind, and an .xml next to its .bin means
// the pair is complete. IoError naming the path when the directory is not writable.
#pragma once

#include <string>

#include "ingot/exporters/openvino/ir.h"

namespace ingot::exporters::openvino {

inline constexpr size_t kWeightAlignment = 64;

// The .bin path that goes with an .xml path (same stem).
std::string bin_path_for(const std::string& xml_path);

// The XML text of `model` and the byte offset of every Const in the .bin (in layer order,
// subgraphs included), for tests and for save_model.
std::string model_xml(const Model& model);

void save_model(const Model& model, const std::string& xml_path);

}  // namespace ingot::exporters::openvino
