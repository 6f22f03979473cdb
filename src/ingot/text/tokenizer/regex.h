// PCRE2-backed regular expressions and the string/regex patterns of tokenizer.json
// (Split and Replace components), with the match iteration of the Oniguruma engine that
// Hugging Face `tokenizers` uses: leftmost matches, left to right, non-overlapping, an
// empty match right at the end of the previous match skipped.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ingot::text::tokenizer {

class JsonNode;

using Match = std::pair<size_t, size_t>;  // [start, end) in bytes

// Rewrites an Oniguruma pattern for PCRE2 so that \s, \d, \w, \p{L}, \p{N} (and their
// negations outside brackets) match the code points Oniguruma matches: White_Space for
// \s, and the characters of Unicode versions newer than PCRE2's added to the others.
std::string translate_to_pcre2(std::string_view pattern);

// The Whitespace pre-tokenizer's `\w+|[^\w\s]+` in PCRE2 syntax, with the \w and \s of
// Rust's regex crate (which that pre-tokenizer uses, rather than Oniguruma).
std::string whitespace_pre_tokenizer_pattern();

class Regex {
 public:
  // Compiles `pattern` (Oniguruma syntax, translated) once: UTF + UCP, JIT when
  // available. `where` names the pattern's origin for errors: a pattern PCRE2 cannot
  // compile is a NotSupportedError.
  // With `translate` false the pattern is PCRE2 syntax, compiled as is.
  Regex(std::string_view pattern, std::string_view where, bool translate = true);
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends every match in `text` (valid UTF-8) to `out`.
  void find_all(std::string_view text, std::vector<Match>& out) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

// A tokenizer.json pattern: {"String": "..."} (literal) or {"Regex": "..."}.
class Pattern {
 public:
  static Pattern from_json(const JsonNode& node);
  static Pattern literal(std::string text);

  void find_all(std::string_view text, std::vector<Match>& out) const;

 private:
  std::string literal_;
  std::unique_ptr<Regex> regex_;
};

// A stretch of a string that either matched a pattern or lies between matches.
struct Span {
  size_t start;
  size_t end;
  bool is_match;
};

// Covers [0, size) with the matches and the gaps between them (tokenizers'
// Pattern::find_matches). An empty string gives one empty non-match span.
void spans_from_matches(size_t size, const std::vector<Match>& matches, std::vector<Span>& out);

}  // namespace ingot::text::tokenizer
