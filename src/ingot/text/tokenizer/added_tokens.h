// Added tokens (tokenizer.json "added_tokens"): matched as whole strings before the model
// runs, as tokenizers' AddedVocabulary does. Tokens with normalized=false are matched in
// the raw input; tokens with normalized=true are matched in the normalized text, by their
// normalized content. Among matches the leftmost, then longest, wins; single_word,
// lstrip and rstrip then filter or widen each match.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/vocab.h"

namespace ingot::text::tokenizer {

struct AddedToken {
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

// A stretch of text or a matched added token.
struct Segment {
  size_t start;  // byte offsets in the split text
  size_t end;
  int64_t id;  // the added token's id, or -1 for text
};

class AddedVocabulary {
 public:
  // Adds the tokens in order, as tokenizers' add_tokens: a token keeps the id its content
  // already has (added or model vocabulary), else takes the next free id.
  void add(const std::vector<AddedToken>& tokens, const Model& model, const Normalizer* normalizer);

  // Splits `text` by the raw (normalized=false) or the normalized tokens.
  void split(std::string_view text, bool normalized_tokens, std::vector<Segment>& out) const;

  std::optional<int64_t> token_to_id(std::string_view token) const;
  // The token string decode() uses: the normalized content for normalized tokens.
  const std::string* id_to_token(int64_t id) const;
  bool is_special_token(std::string_view token) const {
    return special_.find(token) != special_.end();
  }
  bool is_special_id(int64_t id) const;
  size_t size() const { return ids_.size(); }
  const TokenMap& ids() const { return ids_; }

 private:
  // Byte trie for leftmost-longest matching.
  class Trie {
   public:
    void clear();
    void insert(std::string_view pattern, int64_t id);
    bool empty() const { return nodes_.size() <= 1; }
    // Longest pattern starting at text[pos]: its length and id, or {0, -1}.
    std::pair<size_t, int64_t> longest_at(std::string_view text, size_t pos) const;
    bool can_start(unsigned char byte) const { return first_bytes_[byte]; }

   private:
    struct Node {
      std::vector<std::pair<unsigned char, int32_t>> children;
      int64_t id = -1;
    };
    std::vector<Node> nodes_{1};
    bool first_bytes_[256] = {};
  };

  void rebuild_tries();

  TokenMap ids_;                                                 // content -> id
  std::map<int64_t, AddedToken> tokens_;                         // id -> token
  std::unordered_map<int64_t, std::string> normalized_content_;  // where it differs
  std::unordered_set<std::string, StringHash, std::equal_to<>> special_;
  Trie raw_trie_, normalized_trie_;
};

}  // namespace ingot::text::tokenizer
