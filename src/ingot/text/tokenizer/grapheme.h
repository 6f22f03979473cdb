// Extended grapheme clusters (UAX #29, as the Rust unicode-segmentation crate cuts them),
// for the Precompiled normalizer, which looks whole clusters up in its charsmap.
#pragma once

#include <cstddef>
#include <string_view>

namespace ingot::text::tokenizer {

// End (byte offset) of the grapheme cluster that starts at `start` < text.size() in valid
// UTF-8 `text`.
size_t grapheme_end(std::string_view text, size_t start);

}  // namespace ingot::text::tokenizer
