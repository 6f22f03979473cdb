// ONNX for ingot::quantized_linear (translate_quantized.cpp): the translation writes
// either ONNX Runtime's MatMulNBits (com.microsoft) or DequantizeLinear + MatMul
// (LoweringOptions::quantized_matmul), sharing the packed bytes with the program's
// parameters wherever the ONNX layout allows.
#pragma once

#include "ingot/exporters/onnx/model.h"

namespace ingot::exporters::onnx {

// After lowering: imports the com.microsoft opset when a node uses it, and drops
// initializers no node reads (the packed parameters the translation re-labelled with
// ONNX's shapes; each is then stored once). Other models are unchanged.
void finish_quantized_model(ModelProto& model);

}  // namespace ingot::exporters::onnx
