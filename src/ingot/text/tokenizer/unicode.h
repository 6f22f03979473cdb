// UTF-8 and Unicode character properties for the tokenizers, with the semantics of the
// Rust crates behind Hugging Face `tokenizers` (see unicode_tables.h for where the data
// comes from).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ingot::text::tokenizer {

// Decodes the code point starting at text[pos] and advances pos past it. The text must be
// valid UTF-8 (checked once on entry by find_invalid_utf8).
inline char32_t next_code_point(std::string_view text, size_t& pos) {
  auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  auto cont = [&](size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i]) & 0x3F);
  };
  char32_t c;
  if (b0 < 0xE0) {
    c = (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1);
    pos += 2;
  } else if (b0 < 0xF0) {
    c = (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
  } else {
    c = (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
  }
  return c;
}

// Byte length of the UTF-8 sequence that starts with `lead` (valid UTF-8 assumed).
inline size_t utf8_sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

void append_utf8(std::string& out, char32_t c);

// Offset of the first byte that is not part of valid UTF-8, or npos when all is valid.
size_t find_invalid_utf8(std::string_view bytes);

// Decodes bytes as Rust's String::from_utf8_lossy does: each maximal invalid subsequence
// becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes);

bool is_whitespace(char32_t c);       // Rust char::is_whitespace (White_Space)
bool is_bert_removed(char32_t c);     // dropped by BertNormalizer clean_text
bool is_punctuation(char32_t c);      // ASCII punctuation or a P* category
bool is_nonspacing_mark(char32_t c);  // Mn
bool is_combining_mark(char32_t c);   // M*
bool is_numeric(char32_t c);          // N*
bool is_word_char(char32_t c);        // regex \w
bool is_chinese_char(char32_t c);     // the CJK blocks BertNormalizer pads with spaces

// Appends the full lowercase mapping of c (one or more code points).
void append_lowercase(std::string& out, char32_t c);

enum class NormalForm { NFD, NFC, NFKD, NFKC };
std::string unicode_normalize(std::string_view text, NormalForm form);

}  // namespace ingot::text::tokenizer
