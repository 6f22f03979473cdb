// llama.cpp's quantised file types (llama-quantize's `Q4_K_M`, ...), as ingot writes them:
// which ggml type each matrix of the file gets, by llama.cpp's rules (llama-quant.cpp's
// tensor type choice, reimplemented), and the general.file_type (llama_ftype) number.
//
//   file type  ftype  most matrices  more bits
//   q4_k_m      15    Q4_K           attn_v and ffn_down Q6_K in the "use more bits" layers
//                                    (the first and last eighth, every third between)
//   q4_k_s      14    Q4_K           attn_v Q5_K in layers 0..3, ffn_down Q5_K in the first
//                                    eighth of the layers
//   q6_k        18    Q6_K
//   q8_0         7    Q8_0
//
// Every file type: output.weight (and token_embd.weight when the embedding is tied, since
// llama.cpp then multiplies with it) Q6_K, or Q8_0 when its rows are not whole 256-blocks
// (Q8_0 for q8_0). A row length the chosen type's block does not divide falls back as
// llama.cpp's: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, and F16 when 32 does not divide
// it either. 1-D tensors (norms, biases) stay F32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/formats/ggml_types.h"

namespace ingot::exporters {

struct GgufFileType {
  std::string name;          // "q4_k_m"
  uint32_t ftype = 0;        // general.file_type (llama_ftype)
  formats::GgmlType base{};  // the type of most matrices
};

// The file type called `name`; null when `name` is not one (q4_k_m, q4_k_s, q6_k, q8_0).
const GgufFileType* find_gguf_file_type(const std::string& name);
std::vector<std::string> gguf_file_type_names();

// The ggml type of matrix `gguf_name` (llama.cpp's name, "blk.3.attn_v.weight") with rows
// of `cols` values, in a model of `layers` decoder layers whose embedding is `tied`;
// `why` says which rule chose it (for the export's notes).
formats::GgmlType gguf_matrix_type(const GgufFileType& file_type, const std::string& gguf_name,
                                   int64_t cols, int layers, bool tied, std::string* why);

}  // namespace ingot::exporters
