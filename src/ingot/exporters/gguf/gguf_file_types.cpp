#include "ingot/exporters/gguf/gguf_file_types.h"

#include <fmt/format.h>

#include <array>

namespace ingot::exporters {
namespace {

using formats::GgmlType;

const std::array<GgufFileType, 4> kFileTypes = {{
    {"q4_k_m", 15, GgmlType::Q4_K},
    {"q4_k_s", 14, GgmlType::Q4_K},
    {"q6_k", 18, GgmlType::Q6_K},
    {"q8_0", 7, GgmlType::Q8_0},
}};

int64_t block_of(GgmlType t) {
  return formats::ggml_type_traits(uint32_t(t))->block_size;
}

// The layer index of "blk.N.<...>", -1 for other names.
int layer_of(const std::string& name) {
  if (!name.starts_with("blk.")) return -1;
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos) return -1;
  try {
    return std::stoi(name.substr(4, dot - 4));
  } catch (...) {
    return -1;
  }
}

// llama.cpp's use_more_bits: the first and last eighth of the layers, every third between.
bool more_bits(int layer, int layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

}  // namespace

const GgufFileType* find_gguf_file_type(const std::string& name) {
  for (const GgufFileType& f : kFileTypes)
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> gguf_file_type_names() {
  std::vector<std::string> out;
  for (const GgufFileType& f : kFileTypes) out.push_back(f.name);
  return out;
}

GgmlType gguf_matrix_type(const GgufFileType& ft, const std::string& name, int64_t cols, int layers,
                          bool tied, std::string* why) {
  GgmlType type = ft.base;
  std::string reason = ft.name;
  const bool output = name == "output.weight" || (tied && name == "token_embd.weight");
  const int layer = layer_of(name);
  if (output) {
    if (cols % block_of(ft.base) != 0) {
      type = GgmlType::Q8_0;
      reason = fmt::format("the output matrix, rows of {} not whole {} blocks", cols,
                           formats::ggml_type_name(ft.base));
    } else if (ft.base != GgmlType::Q8_0) {
      type = GgmlType::Q6_K;
      reason = "the output matrix";
    }
  } else if (name.ends_with("attn_v.weight") && layer >= 0) {
    if (ft.name == "q4_k_m" && more_bits(layer, layers)) {
      type = GgmlType::Q6_K;
      reason = fmt::format("attn_v in layer {} of {} (more bits)", layer, layers);
    } else if (ft.name == "q4_k_s" && layer < 4) {
      type = GgmlType::Q5_K;
      reason = fmt::format("attn_v in layer {} (< 4)", layer);
    }
  } else if (name.ends_with("ffn_down.weight") && layer >= 0) {
    if (ft.name == "q4_k_m" && more_bits(layer, layers)) {
      type = GgmlType::Q6_K;
      reason = fmt::format("ffn_down in layer {} of {} (more bits)", layer, layers);
    } else if (ft.name == "q4_k_s" && layer < layers / 8) {
      type = GgmlType::Q5_K;
      reason = fmt::format("ffn_down in layer {} of {} (first eighth)", layer, layers);
    }
  }
  if (cols % block_of(type) != 0) {
    const GgmlType chosen = type;
    type = type == GgmlType::Q4_K   ? GgmlType::Q5_0
           : type == GgmlType::Q5_K ? GgmlType::Q5_1
                                    : GgmlType::Q8_0;
    if (cols % block_of(type) != 0) type = GgmlType::F16;
    reason += fmt::format("; rows of {} are not whole {} blocks: {}", cols,
                          formats::ggml_type_name(chosen), formats::ggml_type_name(type));
  }
  if (why) *why = std::move(reason);
  return type;
}

}  // namespace ingot::exporters
