// Python's str operations on UTF-8 text, as chat templates use them: code-point
// indexing and slicing, whitespace (str.isspace), strip / split / replace / case.
//
// Strings are UTF-8. Decoding never reads past the end: a malformed byte decodes as
// U+FFFD and advances by one, so any bytes are safe to process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::text::chat {

// The code point at text[pos]; advances pos. U+FFFD (one byte) for malformed input.
char32_t decode_utf8(std::string_view text, size_t& pos);
void append_utf8_char(std::string& out, char32_t c);
// Byte offset of the first malformed byte, or npos.
size_t find_invalid_utf8(std::string_view text);

bool is_py_space(char32_t c);   // str.isspace
bool is_printable(char32_t c);  // str.isprintable, approximated (see text.cpp)

// Byte offsets of each code point, plus text.size() at the end.
std::vector<size_t> code_point_offsets(std::string_view text);
size_t code_point_count(std::string_view text);

// str.strip / lstrip / rstrip: whitespace, or any of the code points in `chars`.
std::string py_strip(std::string_view text, const std::optional<std::string>& chars, bool left,
                     bool right);
// str.split(sep, maxsplit) (sep nullopt: runs of whitespace). `sep` must not be empty.
std::vector<std::string> py_split(std::string_view text, const std::optional<std::string>& sep,
                                  int64_t maxsplit);
// str.rsplit(sep, maxsplit).
std::vector<std::string> py_rsplit(std::string_view text, const std::optional<std::string>& sep,
                                   int64_t maxsplit);
// str.replace(old, new, count) (count < 0: all).
std::string py_replace(std::string_view text, std::string_view old, std::string_view with,
                       int64_t count);
std::string py_lower(std::string_view text);
std::string py_upper(std::string_view text);
std::string py_capitalize(std::string_view text);  // str.capitalize
std::string py_title(std::string_view text);       // str.title
std::string jinja_title(std::string_view text);    // jinja2's |title filter

}  // namespace ingot::text::chat
