#include "ingot/text/tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"
#include "ingot/text/tokenizer/unicode_tables.h"

namespace ingot::text::tokenizer {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Per-thread match data and JIT stack, shared by every Regex on that thread.
struct MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;
  MatchState() {
    data = pcre2_match_data_create(32, nullptr);
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchState() {
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
};

MatchState& match_state() {
  thread_local MatchState state;
  return state;
}

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

void append_ranges(std::string& out, std::span<const tables::CodeRange> ranges) {
  for (const auto& r : ranges) {
    out += fmt::format("\\x{{{:X}}}", static_cast<uint32_t>(r.first));
    if (r.last != r.first) out += fmt::format("-\\x{{{:X}}}", static_cast<uint32_t>(r.last));
  }
}

}  // namespace

std::string translate_to_pcre2(std::string_view pattern) {
  // Class bodies with Oniguruma's membership (see unicode_tables.h).
  std::string space, letter = "\\p{L}", number = "\\p{N}", digit = "\\d", word;
  append_ranges(space, tables::whitespace);
  append_ranges(letter, tables::regex_letter_extra);
  append_ranges(number, tables::regex_number_extra);
  append_ranges(digit, tables::regex_digit_extra);
  append_ranges(word, tables::regex_word);

  std::string out;
  out.reserve(pattern.size() * 2);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) {
      in_class = false;
      out += c;
      continue;
    }
    if (c != '\\' || i + 1 >= pattern.size()) {
      out += c;
      continue;
    }
    std::string_view rest = pattern.substr(i + 1);
    const std::string* body = nullptr;
    bool negated = false;
    size_t consumed = 1;
    if (rest.starts_with("p{L}") || rest.starts_with("pL")) {
      body = &letter;
      consumed = rest[1] == '{' ? 4 : 2;
    } else if (rest.starts_with("p{N}") || rest.starts_with("pN")) {
      body = &number;
      consumed = rest[1] == '{' ? 4 : 2;
    } else if (rest[0] == 's' || rest[0] == 'd' || rest[0] == 'w') {
      body = rest[0] == 's' ? &space : rest[0] == 'd' ? &digit : &word;
    } else if (!in_class && (rest[0] == 'S' || rest[0] == 'D' || rest[0] == 'W')) {
      body = rest[0] == 'S' ? &space : rest[0] == 'D' ? &digit : &word;
      negated = true;
    } else if (!in_class && (rest.starts_with("P{L}") || rest.starts_with("P{N}"))) {
      body = rest[2] == 'L' ? &letter : &number;
      negated = true;
      consumed = 4;
    }
    if (!body) {  // any other escape, copied as is
      out += c;
      out += pattern[++i];
      continue;
    }
    if (in_class) {
      out += *body;
    } else {
      out += negated ? "[^" : "[";
      out += *body;
      out += ']';
    }
    i += consumed;
  }
  return out;
}

std::string whitespace_pre_tokenizer_pattern() {
  std::string word, space;
  append_ranges(word, tables::word);
  append_ranges(space, tables::whitespace);
  return fmt::format("[{}]+|[^{}{}]+", word, word, space);
}

Regex::Regex(std::string_view original, std::string_view where, bool translate)
    : code_(std::make_unique<Code>()) {
  std::string translated = translate ? translate_to_pcre2(original) : std::string(original);
  std::string_view pattern = translated;
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  INGOT_CHECK(code_->code != nullptr, NotSupportedError,
              "[tokenizer] {}: regex '{}' does not compile with PCRE2 (as '{}', at offset {}): {}",
              where, original, pattern, offset, pcre2_message(error));
  // JIT is an optimisation: when unavailable, pcre2_match interprets.
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

void Regex::find_all(std::string_view text, std::vector<Match>& out) const {
  MatchState& state = match_state();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  size_t previous_end = std::string_view::npos;
  while (pos <= text.size()) {
    int rc = pcre2_match(code_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, state.data,
                         state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    INGOT_CHECK(rc >= 0, ValueError, "[tokenizer] regex match failed: {}", pcre2_message(rc));
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    size_t start = ovector[0], end = ovector[1];
    if (start == end && start == previous_end) {
      // An empty match touching the previous match: step over one character.
      if (start >= text.size()) break;
      pos = start + utf8_sequence_length(static_cast<unsigned char>(text[start]));
      continue;
    }
    out.emplace_back(start, end);
    previous_end = end;
    if (end > start) {
      pos = end;
    } else {
      if (end >= text.size()) break;
      pos = end + utf8_sequence_length(static_cast<unsigned char>(text[end]));
    }
  }
}

Pattern Pattern::from_json(const JsonNode& node) {
  Pattern p;
  if (auto s = node.find("String")) {
    p.literal_ = s->get_string();
  } else if (auto r = node.find("Regex")) {
    p.regex_ = std::make_unique<Regex>(r->get_string(),
                                       fmt::format("'{}' field '{}'", node.origin(), r->path()));
  } else {
    node.fail("should be {\"String\": ...} or {\"Regex\": ...}");
  }
  return p;
}

Pattern Pattern::literal(std::string text) {
  Pattern p;
  p.literal_ = std::move(text);
  return p;
}

void Pattern::find_all(std::string_view text, std::vector<Match>& out) const {
  if (regex_) {
    regex_->find_all(text, out);
    return;
  }
  if (literal_.empty()) return;
  for (size_t pos = text.find(literal_); pos != std::string_view::npos;
       pos = text.find(literal_, pos + literal_.size())) {
    out.emplace_back(pos, pos + literal_.size());
  }
}

void spans_from_matches(size_t size, const std::vector<Match>& matches, std::vector<Span>& out) {
  if (size == 0) {
    out.push_back({0, 0, false});
    return;
  }
  size_t previous = 0;
  for (auto [start, end] : matches) {
    if (previous != start) out.push_back({previous, start, false});
    out.push_back({start, end, true});
    previous = end;
  }
  if (previous != size) out.push_back({previous, size, false});
}

}  // namespace ingot::text::tokenizer
