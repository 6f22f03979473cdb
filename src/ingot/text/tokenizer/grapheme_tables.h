// Grapheme cluster break properties (UAX #29) for the Precompiled normalizer, generated
// by tools/reference/make_grapheme_tables.py (regex-module properties, checked against
// the Hugging Face `tokenizers` package). Ranges are sorted, disjoint and inclusive; code
// points not covered have property 0 (Other, no flags).
#pragma once

#include <cstdint>
#include <span>

namespace ingot::text::tokenizer::tables {

struct GraphemeRange {
  char32_t first;
  char32_t last;
  // bits 0-3 GraphemeBreak, bit 4 Extended_Pictographic, bits 5-6 Indic_Conjunct_Break
  // (0 none, 1 Linker, 2 Consonant, 3 Extend).
  uint8_t property;
};

extern const std::span<const GraphemeRange> grapheme;

}  // namespace ingot::text::tokenizer::tables
