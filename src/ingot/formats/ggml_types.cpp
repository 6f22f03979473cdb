#include "ingot/formats/ggml_types.h"

namespace ingot::formats {

std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type) {
  // Block sizes and byte sizes of ggml's block structs (ggml-common.h); QK_K = 256.
  switch (GgmlType(type)) {
    case GgmlType::F32:
      return GgmlTypeTraits{"F32", 1, 4};
    case GgmlType::F16:
      return GgmlTypeTraits{"F16", 1, 2};
    case GgmlType::Q4_0:
      return GgmlTypeTraits{"Q4_0", 32, 18};
    case GgmlType::Q4_1:
      return GgmlTypeTraits{"Q4_1", 32, 20};
    case GgmlType::Q5_0:
      return GgmlTypeTraits{"Q5_0", 32, 22};
    case GgmlType::Q5_1:
      return GgmlTypeTraits{"Q5_1", 32, 24};
    case GgmlType::Q8_0:
      return GgmlTypeTraits{"Q8_0", 32, 34};
    case GgmlType::Q8_1:
      return GgmlTypeTraits{"Q8_1", 32, 36};
    case GgmlType::Q2_K:
      return GgmlTypeTraits{"Q2_K", 256, 84};
    case GgmlType::Q3_K:
      return GgmlTypeTraits{"Q3_K", 256, 110};
    case GgmlType::Q4_K:
      return GgmlTypeTraits{"Q4_K", 256, 144};
    case GgmlType::Q5_K:
      return GgmlTypeTraits{"Q5_K", 256, 176};
    case GgmlType::Q6_K:
      return GgmlTypeTraits{"Q6_K", 256, 210};
    case GgmlType::Q8_K:
      return GgmlTypeTraits{"Q8_K", 256, 292};
    case GgmlType::IQ2_XXS:
      return GgmlTypeTraits{"IQ2_XXS", 256, 66};
    case GgmlType::IQ2_XS:
      return GgmlTypeTraits{"IQ2_XS", 256, 74};
    case GgmlType::IQ3_XXS:
      return GgmlTypeTraits{"IQ3_XXS", 256, 98};
    case GgmlType::IQ1_S:
      return GgmlTypeTraits{"IQ1_S", 256, 50};
    case GgmlType::IQ4_NL:
      return GgmlTypeTraits{"IQ4_NL", 32, 18};
    case GgmlType::IQ3_S:
      return GgmlTypeTraits{"IQ3_S", 256, 110};
    case GgmlType::IQ2_S:
      return GgmlTypeTraits{"IQ2_S", 256, 82};
    case GgmlType::IQ4_XS:
      return GgmlTypeTraits{"IQ4_XS", 256, 136};
    case GgmlType::I8:
      return GgmlTypeTraits{"I8", 1, 1};
    case GgmlType::I16:
      return GgmlTypeTraits{"I16", 1, 2};
    case GgmlType::I32:
      return GgmlTypeTraits{"I32", 1, 4};
    case GgmlType::I64:
      return GgmlTypeTraits{"I64", 1, 8};
    case GgmlType::F64:
      return GgmlTypeTraits{"F64", 1, 8};
    case GgmlType::IQ1_M:
      return GgmlTypeTraits{"IQ1_M", 256, 56};
    case GgmlType::BF16:
      return GgmlTypeTraits{"BF16", 1, 2};
    case GgmlType::TQ1_0:
      return GgmlTypeTraits{"TQ1_0", 256, 54};
    case GgmlType::TQ2_0:
      return GgmlTypeTraits{"TQ2_0", 256, 66};
    case GgmlType::MXFP4:
      return GgmlTypeTraits{"MXFP4", 32, 17};
    case GgmlType::NVFP4:
      return GgmlTypeTraits{"NVFP4", 64, 36};
    case GgmlType::Q1_0:
      return GgmlTypeTraits{"Q1_0", 128, 18};
  }
  return std::nullopt;
}

const char* ggml_type_name(GgmlType type) {
  auto t = ggml_type_traits(uint32_t(type));
  return t ? t->name : "unknown";
}

}  // namespace ingot::formats
