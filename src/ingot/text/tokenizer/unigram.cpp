// The Unigram model (SentencePiece's, as tokenizers implements it): the segmentation of a
// piece into vocabulary pieces with the highest total score (Viterbi over the lattice of
// every vocabulary piece found at every character position).
//
// As in tokenizers: every vocabulary piece can match, special ones included; a character
// that starts no single-character piece may be covered by the unknown token, scored
// min(score) - 10; consecutive unknown pieces are fused into one; a fused unknown run
// falls back to <0xNN> byte tokens when byte_fallback is set and all of them exist, and is
// the unk_id token otherwise. Ties keep the earlier candidate (shorter pieces are tried
// first at a position, earlier positions first).
#include <limits>

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"
#include "ingot/text/tokenizer/vocab.h"

namespace ingot::text::tokenizer {

std::unique_ptr<Model> make_unigram_model(const JsonNode& node);

namespace {

// A byte trie over the vocabulary for common-prefix search.
class PieceTrie {
 public:
  PieceTrie() : nodes_(1) {}

  void insert(std::string_view piece, int64_t id) {
    uint32_t node = 0;
    for (char c : piece) {
      uint32_t& child = edge(node, static_cast<unsigned char>(c));
      if (child == 0) {
        child = static_cast<uint32_t>(nodes_.size());
        nodes_.emplace_back();
      }
      node = child;
    }
    nodes_[node].id = id;  // a later duplicate piece wins, as in tokenizers' token_to_ids
  }

  // Calls fn(length, id) for every piece that is a prefix of `text`, shortest first.
  template <typename Fn>
  void prefixes(std::string_view text, Fn&& fn) const {
    uint32_t node = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      node = child(node, static_cast<unsigned char>(text[i]));
      if (node == 0) return;
      if (nodes_[node].id >= 0) fn(i + 1, nodes_[node].id);
    }
  }

 private:
  struct Node {
    int64_t id = -1;
    std::vector<std::pair<unsigned char, uint32_t>> children;  // sorted by byte
  };

  uint32_t& edge(uint32_t node, unsigned char c) {
    auto& children = nodes_[node].children;
    auto it = std::lower_bound(children.begin(), children.end(), c,
                               [](const auto& e, unsigned char x) { return e.first < x; });
    if (it == children.end() || it->first != c) it = children.insert(it, {c, 0});
    return it->second;
  }
  uint32_t child(uint32_t node, unsigned char c) const {
    const auto& children = nodes_[node].children;
    auto it = std::lower_bound(children.begin(), children.end(), c,
                               [](const auto& e, unsigned char x) { return e.first < x; });
    return it == children.end() || it->first != c ? 0 : it->second;
  }

  std::vector<Node> nodes_;
};

class UnigramModel final : public Model {
 public:
  explicit UnigramModel(const JsonNode& node) : origin_(node.origin()) {
    JsonNode list = node.at("vocab");
    size_t n = list.array_size();
    if (n == 0) list.fail("is empty: a Unigram model needs at least one piece");
    pieces_.reserve(n);
    scores_.reserve(n);
    double min_score = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i) {
      JsonNode entry = list.at(i);
      if (entry.array_size() != 2 || !entry.value()[1].is_number()) {
        entry.fail("should be a [piece, score] pair");
      }
      std::string piece = entry.at(size_t{0}).get_string();
      double score = entry.value()[1].get<double>();
      auto id = static_cast<int64_t>(i);
      ids_[piece] = id;
      trie_.insert(piece, id);
      pieces_.push_back(std::move(piece));
      scores_.push_back(score);
      min_score = std::min(min_score, score);
    }
    unk_score_ = min_score - kUnkPenalty;
    if (auto unk = node.find("unk_id")) {
      if (!unk->value().is_number_integer() || unk->value().get<int64_t>() < 0 ||
          unk->value().get<int64_t>() >= static_cast<int64_t>(n)) {
        unk->fail(fmt::format("should be the index of a piece of model.vocab (0 to {})", n - 1));
      }
      unk_id_ = unk->value().get<int64_t>();
    }
    byte_fallback_ = node.boolean("byte_fallback", false);
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        auto it = ids_.find(fmt::format("<0x{:02X}>", b));
        byte_ids_[b] = it == ids_.end() ? -1 : it->second;
      }
    }
  }

  void tokenize(std::string_view piece, std::vector<int64_t>& ids) const override {
    std::vector<std::string_view> parts = segment(piece);
    for (std::string_view part : parts) {
      if (auto it = ids_.find(part); it != ids_.end()) {
        ids.push_back(it->second);
        continue;
      }
      if (byte_fallback_) {
        bool all = true;
        for (char c : part) all = all && byte_ids_[static_cast<unsigned char>(c)] >= 0;
        if (all) {
          for (char c : part) ids.push_back(byte_ids_[static_cast<unsigned char>(c)]);
          continue;
        }
      }
      ids.push_back(require_unk());
    }
  }

  std::optional<int64_t> token_to_id(std::string_view token) const override {
    auto it = ids_.find(token);
    return it == ids_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  const std::string* id_to_token(int64_t id) const override {
    return id >= 0 && id < static_cast<int64_t>(pieces_.size()) ? &pieces_[id] : nullptr;
  }
  // tokenizers counts the vocabulary list, duplicates included.
  size_t vocab_size() const override { return pieces_.size(); }
  std::vector<std::pair<std::string, int64_t>> vocab() const override {
    return {ids_.begin(), ids_.end()};
  }

 private:
  static constexpr double kUnkPenalty = 10.0;

  int64_t require_unk() const {
    INGOT_CHECK(unk_id_ >= 0, ValueError,
                "[tokenizer] '{}': the text has a character that no piece of the Unigram "
                "model covers, and model.unk_id is not set",
                origin_);
    return unk_id_;
  }

  // The best segmentation of `piece` as byte ranges, unknown runs fused.
  std::vector<std::string_view> segment(std::string_view piece) const {
    struct Best {
      double score = 0;
      int64_t id = -1;
      int64_t start = -1;  // -1: not reached yet
    };
    std::vector<Best> best(piece.size() + 1);
    for (size_t start = 0; start < piece.size();) {
      const double here = best[start].score;
      size_t char_len = utf8_sequence_length(static_cast<unsigned char>(piece[start]));
      bool single_char = false;
      trie_.prefixes(piece.substr(start), [&](size_t len, int64_t id) {
        Best& target = best[start + len];
        double candidate = scores_[id] + here;
        if (target.start < 0 || candidate > target.score) {
          target = {candidate, id, static_cast<int64_t>(start)};
        }
        single_char = single_char || len == char_len;
      });
      if (!single_char) {
        Best& target = best[start + char_len];
        double candidate = unk_score_ + here;
        if (target.start < 0 || candidate > target.score) {
          target = {candidate, require_unk(), static_cast<int64_t>(start)};
        }
      }
      start += char_len;
    }
    // Backtrack from the end, fusing runs of unknown pieces.
    std::vector<std::string_view> parts;
    size_t end = piece.size();
    size_t unk_end = 0;
    bool in_unk = false;
    while (end > 0) {
      const Best& node = best[end];
      auto start = static_cast<size_t>(node.start);
      if (unk_id_ >= 0 && node.id == unk_id_) {
        if (!in_unk) unk_end = end;
        in_unk = true;
      } else {
        if (in_unk) parts.push_back(piece.substr(end, unk_end - end));
        in_unk = false;
        parts.push_back(piece.substr(start, end - start));
      }
      end = start;
    }
    if (in_unk) parts.push_back(piece.substr(0, unk_end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }

  std::string origin_;
  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  TokenMap ids_;
  PieceTrie trie_;
  double unk_score_ = 0;
  int64_t unk_id_ = -1;
  bool byte_fallback_ = false;
  int64_t byte_ids_[256] = {};
};

}  // namespace

std::unique_ptr<Model> make_unigram_model(const JsonNode& node) {
  return std::make_unique<UnigramModel>(node);
}

}  // namespace ingot::text::tokenizer
