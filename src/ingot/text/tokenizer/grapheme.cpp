// Grapheme cluster boundaries: the rules GB3-GB13 of UAX #29 (Unicode 15.1+, with the
// Indic conjunct rule GB9c) over the properties of grapheme_tables.cpp.
#include "ingot/text/tokenizer/grapheme.h"

#include <algorithm>
#include <cstdint>

#include "ingot/text/tokenizer/grapheme_tables.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {
namespace {

// Grapheme_Cluster_Break values, in the order of make_grapheme_tables.py's GCB list.
enum Break : uint8_t {
  Other,
  CR,
  LF,
  Control,
  Extend,
  ZWJ,
  RegionalIndicator,
  Prepend,
  SpacingMark,
  L,
  V,
  T,
  LV,
  LVT
};
enum Conjunct : uint8_t { NoConjunct, Linker, Consonant, ConjunctExtend };

struct Props {
  Break gcb;
  bool pictographic;
  Conjunct conjunct;
};

Props props_of(char32_t c) {
  uint8_t p = 0;
  if (c >= 0x20 && c < 0x7F) {
    p = 0;  // printable ASCII: Other
  } else {
    const auto& table = tables::grapheme;
    auto it =
        std::upper_bound(table.begin(), table.end(), c,
                         [](char32_t x, const tables::GraphemeRange& r) { return x < r.first; });
    if (it != table.begin() && c <= (it - 1)->last) p = (it - 1)->property;
  }
  return {static_cast<Break>(p & 0xF), (p & 0x10) != 0, static_cast<Conjunct>((p >> 5) & 3)};
}

}  // namespace

size_t grapheme_end(std::string_view text, size_t start) {
  size_t pos = start;
  Props prev = props_of(next_code_point(text, pos));
  // State for GB11 (pictographic Extend* ZWJ x pictographic), GB12/13 (regional indicator
  // pairs) and GB9c (consonant [extend linker]* linker [extend linker]* x consonant).
  bool pict_sequence = prev.pictographic;  // a pictographic followed by Extend* so far
  bool pict_zwj = false;                   // ... and then one ZWJ
  int regional = prev.gcb == RegionalIndicator ? 1 : 0;
  bool conjunct_open = prev.conjunct == Consonant;  // consonant [extend|linker]*
  bool conjunct_linked = false;                     // ... containing a linker
  while (pos < text.size()) {
    size_t next_pos = pos;
    Props cur = props_of(next_code_point(text, next_pos));
    bool join;
    if (prev.gcb == CR && cur.gcb == LF) {
      join = true;  // GB3
    } else if (prev.gcb == CR || prev.gcb == LF || prev.gcb == Control || cur.gcb == CR ||
               cur.gcb == LF || cur.gcb == Control) {
      join = false;  // GB4, GB5
    } else if (prev.gcb == L && (cur.gcb == L || cur.gcb == V || cur.gcb == LV || cur.gcb == LVT)) {
      join = true;  // GB6
    } else if ((prev.gcb == LV || prev.gcb == V) && (cur.gcb == V || cur.gcb == T)) {
      join = true;  // GB7
    } else if ((prev.gcb == LVT || prev.gcb == T) && cur.gcb == T) {
      join = true;  // GB8
    } else if (cur.gcb == Extend || cur.gcb == ZWJ || cur.gcb == SpacingMark ||
               prev.gcb == Prepend) {
      join = true;  // GB9, GB9a, GB9b
    } else if (conjunct_open && conjunct_linked && cur.conjunct == Consonant) {
      join = true;  // GB9c
    } else if (pict_zwj && cur.pictographic) {
      join = true;  // GB11
    } else if (prev.gcb == RegionalIndicator && cur.gcb == RegionalIndicator) {
      join = regional % 2 == 1;  // GB12, GB13
    } else {
      join = false;  // GB999
    }
    if (!join) break;
    // Advance the sequence states over `cur`.
    pict_zwj = pict_sequence && cur.gcb == ZWJ;
    pict_sequence = cur.pictographic || (pict_sequence && cur.gcb == Extend);
    regional = cur.gcb == RegionalIndicator ? regional + 1 : 0;
    if (cur.conjunct == Consonant) {
      conjunct_open = true;
      conjunct_linked = false;
    } else if (conjunct_open && (cur.conjunct == Linker || cur.conjunct == ConjunctExtend)) {
      conjunct_linked = conjunct_linked || cur.conjunct == Linker;
    } else {
      conjunct_open = false;
      conjunct_linked = false;
    }
    prev = cur;
    pos = next_pos;
  }
  return pos;
}

}  // namespace ingot::text::tokenizer
