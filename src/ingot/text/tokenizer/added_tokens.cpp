#include "ingot/text/tokenizer/added_tokens.h"

#include <algorithm>

#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {

void AddedVocabulary::Trie::clear() {
  nodes_.assign(1, Node{});
  std::fill(std::begin(first_bytes_), std::end(first_bytes_), false);
}

void AddedVocabulary::Trie::insert(std::string_view pattern, int64_t id) {
  if (pattern.empty()) return;
  first_bytes_[static_cast<unsigned char>(pattern[0])] = true;
  int32_t node = 0;
  for (char ch : pattern) {
    auto byte = static_cast<unsigned char>(ch);
    auto& children = nodes_[node].children;
    auto it = std::find_if(children.begin(), children.end(),
                           [byte](const auto& c) { return c.first == byte; });
    if (it != children.end()) {
      node = it->second;
    } else {
      auto next = static_cast<int32_t>(nodes_.size());
      nodes_[node].children.emplace_back(byte, next);
      nodes_.emplace_back();
      node = next;
    }
  }
  if (nodes_[node].id < 0) nodes_[node].id = id;
}

std::pair<size_t, int64_t> AddedVocabulary::Trie::longest_at(std::string_view text,
                                                             size_t pos) const {
  std::pair<size_t, int64_t> best{0, -1};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    const auto& children = nodes_[node].children;
    auto it = std::find_if(children.begin(), children.end(),
                           [byte](const auto& c) { return c.first == byte; });
    if (it == children.end()) break;
    node = it->second;
    if (nodes_[node].id >= 0) best = {i + 1 - pos, nodes_[node].id};
  }
  return best;
}

void AddedVocabulary::add(const std::vector<AddedToken>& tokens, const Model& model,
                          const Normalizer* normalizer) {
  int64_t next_id = static_cast<int64_t>(model.vocab_size());
  if (!tokens_.empty()) {
    int64_t max_id = tokens_.rbegin()->first;
    if (max_id >= next_id || model.vocab_size() == 0) next_id = max_id + 1;
  }
  for (const AddedToken& token : tokens) {
    if (token.content.empty()) continue;
    int64_t id;
    if (auto existing = token_to_id(token.content)) {
      id = *existing;
    } else if (auto in_model = model.token_to_id(token.content)) {
      id = *in_model;
    } else {
      id = next_id++;
    }
    if (token.normalized && normalizer) {
      std::string normalized = token.content;
      normalizer->normalize(normalized);
      if (normalized != token.content) normalized_content_[id] = normalized;
    }
    ids_[token.content] = id;
    if (token.special) special_.insert(token.content);
    tokens_[id] = token;
  }
  rebuild_tries();
}

void AddedVocabulary::rebuild_tries() {
  raw_trie_.clear();
  normalized_trie_.clear();
  for (const auto& [id, token] : tokens_) {
    if (token.normalized) {
      auto it = normalized_content_.find(id);
      normalized_trie_.insert(it != normalized_content_.end() ? it->second : token.content, id);
    } else {
      raw_trie_.insert(token.content, id);
    }
  }
}

std::optional<int64_t> AddedVocabulary::token_to_id(std::string_view token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

const std::string* AddedVocabulary::id_to_token(int64_t id) const {
  auto it = tokens_.find(id);
  if (it == tokens_.end()) return nullptr;
  auto n = normalized_content_.find(id);
  return n != normalized_content_.end() ? &n->second : &it->second.content;
}

bool AddedVocabulary::is_special_id(int64_t id) const {
  const std::string* token = id_to_token(id);
  return token && is_special_token(*token);
}

namespace {

// The code point that ends just before byte `end`.
char32_t code_point_before(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return next_code_point(text, start);
}

}  // namespace

void AddedVocabulary::split(std::string_view text, bool normalized_tokens,
                            std::vector<Segment>& out) const {
  const Trie& trie = normalized_tokens ? normalized_trie_ : raw_trie_;
  if (trie.empty()) {
    out.push_back({0, text.size(), -1});
    return;
  }
  size_t emitted = 0;  // end of the last emitted segment
  size_t pos = 0;
  while (pos < text.size()) {
    if (!trie.can_start(static_cast<unsigned char>(text[pos]))) {
      ++pos;
      continue;
    }
    auto [length, id] = trie.longest_at(text, pos);
    if (id < 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + length;
    pos = stop;  // matches never overlap, even when this one is then rejected
    const AddedToken& token = tokens_.at(id);
    if (token.single_word) {
      bool word_before = start > 0 && is_word_char(code_point_before(text, start));
      size_t after = stop;
      bool word_after = stop < text.size() && is_word_char(next_code_point(text, after));
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      size_t s = start;
      while (s > 0) {
        size_t prev = s - 1;
        while (prev > 0 && (static_cast<unsigned char>(text[prev]) & 0xC0) == 0x80) --prev;
        size_t p = prev;
        if (!is_whitespace(next_code_point(text, p))) break;
        s = prev;
      }
      start = std::max(s, emitted);
    }
    if (token.rstrip) {
      while (stop < text.size()) {
        size_t p = stop;
        if (!is_whitespace(next_code_point(text, p))) break;
        stop = p;
      }
    }
    if (emitted < start) out.push_back({emitted, start, -1});
    out.push_back({start, stop, id});
    emitted = stop;
  }
  if (emitted < text.size()) out.push_back({emitted, text.size(), -1});
}

}  // namespace ingot::text::tokenizer
