// A traced (and possibly quantised) program's weights as a GGUF file llama.cpp runs:
// the model folder's config.json and tokenizer as metadata (models/gguf_model_metadata.h,
// models/gguf_tokenizer_metadata.h) and each parameter under llama.cpp's name
// (models::hf_to_gguf_name), q / k rows permuted for llama.cpp's rope where the
// architecture needs it, in ggml's layout (ne = the PyTorch shape reversed).
//
// Types, per weight:
//   1-D (norms, biases)                    F32
//   float matrices                          `outtype`: F32, F16 or BF16
//   ingot int8 (per output channel)         Q8_0: each 32-block of a row gets the row's scale
//   ingot int4, symmetric, group 32/64/128  Q4_0: each 32-block its group's scale
//   ingot int4 with zero points             Q4_1: d = s, m = -z * s
// The integer levels are ingot's own (whatever method chose them: rtn, scale-search,
// gptq); only the scales are rounded to f16, as the block formats store them. A
// quantised matrix whose rows are not whole 32-blocks (K % 32 != 0) is written as its
// dequantised values in F32, which are exactly ingot's (noted). A tied lm_head that the
// quantize stage packed (int8 by default) is written as output.weight beside the float
// token_embd.weight the embedding gathers from, so llama.cpp multiplies with the same
// weights ingot's program does.
// With a llama.cpp file type (`file_type`: q4_k_m, q4_k_s, q6_k, q8_0; the quantize stage
// then leaves the weights float), every float matrix is quantised here into the type
// gguf_file_types.h chooses for it (formats/ggml_quantize.h), each input channel's error
// weighted by `calibration`'s mean squared activations of the linear reading it (null:
// llama.cpp's weighting without an imatrix); general.file_type is the file type's.
// What llama.cpp cannot load is a NotSupportedError naming the weight or key.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ingot/exporters/calibration.h"
#include "ingot/exporters/quantize.h"
#include "ingot/formats/ggml_quantize.h"
#include "ingot/formats/gguf_writer.h"
#include "ingot/ir/program.h"

namespace ingot::exporters {

// The GGUF of `program`'s state; `quantization` is the quantize stage's report (which
// weights it packed, with how many bits); `model_folder` holds config.json and the
// tokenizer. Appends what it changed to `notes`.
struct GgufFileTypeOptions {
  std::string file_type;  // "" or a llama.cpp file type (ValueError naming it otherwise)
  std::shared_ptr<const CalibrationStats> calibration;  // may be null
  formats::KQuantSearch search = formats::KQuantSearch::Refined;
};
formats::GgufWriter gguf_from_program(const ExportedProgram& program,
                                      const std::vector<WeightReport>& quantization,
                                      const std::string& model_folder, const std::string& outtype,
                                      std::vector<std::string>& notes,
                                      const GgufFileTypeOptions& kquant = {});

}  // namespace ingot::exporters
