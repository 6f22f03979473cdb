// The BPE model: characters (or byte-fallback bytes) of a piece, merged pairwise by rank.
#include <mutex>
#include <queue>
#include <shared_mutex>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"
#include "ingot/text/tokenizer/vocab.h"

namespace ingot::text::tokenizer {

std::unique_ptr<Model> make_bpe_model(const JsonNode& node);

namespace {

class BpeModel final : public Model {
 public:
  explicit BpeModel(const JsonNode& node) : vocab_(Vocab::from_json(node.at("vocab"))) {
    origin_ = node.origin();
    if (auto unk = node.find("unk_token")) unk_token_ = unk->get_string();
    prefix_ = node.string("continuing_subword_prefix", "");
    suffix_ = node.string("end_of_word_suffix", "");
    fuse_unk_ = node.boolean("fuse_unk", false);
    byte_fallback_ = node.boolean("byte_fallback", false);
    ignore_merges_ = node.boolean("ignore_merges", false);
    read_merges(node.at("merges"));
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        const int64_t* id = vocab_.find(fmt::format("<0x{:02X}>", b));
        byte_ids_[b] = id ? *id : -1;
      }
    }
  }

  void tokenize(std::string_view piece, std::vector<int64_t>& ids) const override {
    if (ignore_merges_) {
      if (const int64_t* id = vocab_.find(piece)) {
        ids.push_back(*id);
        return;
      }
    }
    if (piece.size() < kMaxCachedLength) {
      std::shared_lock lock(cache_mutex_);
      auto it = cache_.find(piece);
      if (it != cache_.end()) {
        ids.insert(ids.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    std::vector<int64_t> word = merge_word(piece);
    ids.insert(ids.end(), word.begin(), word.end());
    if (piece.size() < kMaxCachedLength) {
      std::unique_lock lock(cache_mutex_);
      if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(piece), std::move(word));
    }
  }

  std::optional<int64_t> token_to_id(std::string_view token) const override {
    const int64_t* id = vocab_.find(token);
    return id ? std::optional<int64_t>(*id) : std::nullopt;
  }
  const std::string* id_to_token(int64_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }
  std::vector<std::pair<std::string, int64_t>> vocab() const override {
    return {vocab_.ids().begin(), vocab_.ids().end()};
  }

 private:
  static constexpr size_t kMaxCachedLength = 256;  // as tokenizers' BPE cache
  static constexpr size_t kCacheCapacity = 10000;

  struct MergeInfo {
    uint32_t rank;
    int64_t new_id;
  };
  static uint64_t pair_key(int64_t a, int64_t b) {
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
  }

  void read_merges(const JsonNode& merges) {
    size_t n = merges.array_size();
    merges_.reserve(n);
    uint32_t rank = 0;
    for (size_t i = 0; i < n; ++i) {
      JsonNode m = merges.at(i);
      std::string a, b;
      if (m.value().is_string()) {  // legacy "a b"
        std::string s = m.get_string();
        if (s.starts_with("#version")) continue;
        size_t space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
          m.fail("should be two tokens separated by one space");
        }
        a = s.substr(0, space);
        b = s.substr(space + 1);
      } else {
        if (m.array_size() != 2) m.fail("should be a pair of tokens");
        a = m.at(size_t{0}).get_string();
        b = m.at(size_t{1}).get_string();
      }
      const int64_t* a_id = vocab_.find(a);
      const int64_t* b_id = vocab_.find(b);
      std::string merged = a + b.substr(std::min(prefix_.size(), b.size()));
      const int64_t* new_id = vocab_.find(merged);
      if (!a_id || !b_id || !new_id) {
        m.fail(fmt::format("merges a token that is not in model.vocab ('{}')", !a_id   ? a
                                                                               : !b_id ? b
                                                                                       : merged));
      }
      if (*a_id > UINT32_MAX || *b_id > UINT32_MAX) m.fail("has an id that does not fit 32 bits");
      // Later duplicates win, as in tokenizers' HashMap collect.
      merges_[pair_key(*a_id, *b_id)] = MergeInfo{rank++, *new_id};
    }
  }

  int64_t unk_id() const {
    const int64_t* id = vocab_.find(unk_token_);
    INGOT_CHECK(id != nullptr, ValueError,
                "[tokenizer] '{}': model.unk_token '{}' is not in model.vocab", origin_,
                unk_token_);
    return *id;
  }

  const MergeInfo* find_merge(int64_t a, int64_t b) const {
    auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  struct Symbol {
    int64_t id;
    int32_t prev;
    int32_t next;
    uint32_t len;  // 0 once merged into its left neighbour
  };

  // The initial symbols of `piece` (one per character, with unknown / byte-fallback
  // handling), then every applicable merge, lowest rank first.
  std::vector<int64_t> merge_word(std::string_view piece) const {
    std::vector<Symbol> symbols;
    symbols.reserve(piece.size());
    auto add = [&](int64_t id, uint32_t len) {
      int32_t index = static_cast<int32_t>(symbols.size());
      symbols.push_back({id, index - 1, index + 1, len});
    };
    // An unknown character waiting to be emitted (and maybe fused with the next ones).
    bool has_unk = false;
    int64_t unk = -1;
    uint32_t unk_len = 0;
    std::string key;
    for (size_t pos = 0; pos < piece.size();) {
      size_t start = pos;
      pos += utf8_sequence_length(static_cast<unsigned char>(piece[pos]));
      auto len = static_cast<uint32_t>(pos - start);
      std::string_view ch = piece.substr(start, len);
      const int64_t* id;
      if (prefix_.empty() && (suffix_.empty() || pos < piece.size())) {
        id = vocab_.find(ch);
        key.assign(ch);
      } else {
        key.clear();
        if (start > 0) key += prefix_;
        key += ch;
        if (pos == piece.size()) key += suffix_;
        id = vocab_.find(key);
      }
      if (id) {
        if (has_unk) {
          add(unk, unk_len);
          has_unk = false;
        }
        add(*id, len);
        continue;
      }
      if (byte_fallback_) {
        bool all = true;
        for (char c : key) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          for (char c : key) add(byte_ids_[static_cast<unsigned char>(c)], 1);
          continue;
        }
      }
      if (!unk_token_.empty()) {
        if (has_unk && fuse_unk_) {
          unk_len += len;
        } else {
          if (has_unk) add(unk, unk_len);
          has_unk = true;
          unk = unk_id();
          unk_len = len;
        }
      }
    }
    if (has_unk) add(unk, unk_len);
    if (!symbols.empty()) symbols.back().next = -1;

    // Min-heap on (rank, position), entries re-validated when popped.
    struct Candidate {
      uint32_t rank;
      int32_t pos;
      int64_t new_id;
      bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    for (size_t i = 0; i + 1 < symbols.size(); ++i) {
      if (const MergeInfo* m = find_merge(symbols[i].id, symbols[i + 1].id)) {
        queue.push({m->rank, static_cast<int32_t>(i), m->new_id});
      }
    }
    while (!queue.empty()) {
      Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      if (left.len == 0 || left.next == -1) continue;
      Symbol right = symbols[left.next];
      const MergeInfo* current = find_merge(left.id, right.id);
      if (!current || current->new_id != top.new_id) continue;  // stale entry
      symbols[left.next].len = 0;
      left.id = top.new_id;
      left.len += right.len;
      left.next = right.next;
      if (right.next != -1) symbols[right.next].prev = top.pos;
      if (left.prev >= 0) {
        if (const MergeInfo* m = find_merge(symbols[left.prev].id, left.id)) {
          queue.push({m->rank, left.prev, m->new_id});
        }
      }
      if (left.next != -1) {
        if (const MergeInfo* m = find_merge(left.id, symbols[left.next].id)) {
          queue.push({m->rank, top.pos, m->new_id});
        }
      }
    }
    std::vector<int64_t> ids;
    for (const Symbol& s : symbols) {
      if (s.len != 0) ids.push_back(s.id);
    }
    return ids;
  }

  Vocab vocab_;
  std::unordered_map<uint64_t, MergeInfo> merges_;
  std::string origin_;
  std::string unk_token_;  // empty: none
  std::string prefix_, suffix_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  int64_t byte_ids_[256] = {};

  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace

std::unique_ptr<Model> make_bpe_model(const JsonNode& node) {
  return std::make_unique<BpeModel>(node);
}

}  // namespace ingot::text::tokenizer
