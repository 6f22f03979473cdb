// The WordPiece and WordLevel models, and the model factory (BPE and Unigram live in
// bpe.cpp and unigram.cpp).
#include "ingot/core/error.h"
#include "ingot/text/tokenizer/components.h"
#include "ingot/text/tokenizer/json_node.h"
#include "ingot/text/tokenizer/unicode.h"
#include "ingot/text/tokenizer/vocab.h"

namespace ingot::text::tokenizer {

std::unique_ptr<Model> make_bpe_model(const JsonNode& node);
std::unique_ptr<Model> make_unigram_model(const JsonNode& node);

namespace {

class VocabModel : public Model {
 public:
  explicit VocabModel(const JsonNode& node)
      : vocab_(Vocab::from_json(node.at("vocab"))), origin_(node.origin()) {}

  std::optional<int64_t> token_to_id(std::string_view token) const override {
    const int64_t* id = vocab_.find(token);
    return id ? std::optional<int64_t>(*id) : std::nullopt;
  }
  const std::string* id_to_token(int64_t id) const override { return vocab_.token(id); }
  size_t vocab_size() const override { return vocab_.size(); }
  std::vector<std::pair<std::string, int64_t>> vocab() const override {
    return {vocab_.ids().begin(), vocab_.ids().end()};
  }

 protected:
  int64_t unk_id(const std::string& unk_token) const {
    const int64_t* id = vocab_.find(unk_token);
    INGOT_CHECK(id != nullptr, ValueError,
                "[tokenizer] '{}': model.unk_token '{}' is not in model.vocab", origin_, unk_token);
    return *id;
  }

  Vocab vocab_;
  std::string origin_;
};

// Greedy longest-match-first subwords; a piece with any unmatched rest is one unk token.
class WordPieceModel final : public VocabModel {
 public:
  explicit WordPieceModel(const JsonNode& node)
      : VocabModel(node),
        unk_token_(node.string("unk_token", "[UNK]")),
        prefix_(node.string("continuing_subword_prefix", "##")),
        max_chars_(node.integer("max_input_chars_per_word", 100)) {}

  void tokenize(std::string_view piece, std::vector<int64_t>& ids) const override {
    size_t chars = 0;
    for (char c : piece) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (static_cast<int64_t>(chars) > max_chars_) {
      ids.push_back(unk_id(unk_token_));
      return;
    }
    size_t first = ids.size();
    std::string key;
    size_t start = 0;
    while (start < piece.size()) {
      size_t end = piece.size();
      const int64_t* found = nullptr;
      while (start < end) {
        key.clear();
        if (start > 0) key += prefix_;
        key.append(piece.substr(start, end - start));
        found = vocab_.find(key);
        if (found) break;
        // Drop the last character.
        --end;
        while (end > start && (static_cast<unsigned char>(piece[end]) & 0xC0) == 0x80) --end;
      }
      if (!found) {
        ids.resize(first);
        ids.push_back(unk_id(unk_token_));
        return;
      }
      ids.push_back(*found);
      start = end;
    }
  }

 private:
  std::string unk_token_, prefix_;
  int64_t max_chars_;
};

class WordLevelModel final : public VocabModel {
 public:
  explicit WordLevelModel(const JsonNode& node)
      : VocabModel(node), unk_token_(node.string("unk_token", "<unk>")) {}

  void tokenize(std::string_view piece, std::vector<int64_t>& ids) const override {
    const int64_t* id = vocab_.find(piece);
    ids.push_back(id ? *id : unk_id(unk_token_));
  }

 private:
  std::string unk_token_;
};

}  // namespace

std::unique_ptr<Model> make_model(const JsonNode& node) {
  // The model's "type" may be absent in old files; infer it like tokenizers does.
  std::string type;
  if (node.find("type")) {
    type = node.type();
  } else if (node.find("merges")) {
    type = "BPE";
  } else if (node.find("continuing_subword_prefix") || node.find("max_input_chars_per_word")) {
    type = "WordPiece";
  } else {
    type = "WordLevel";
  }
  if (type == "BPE") return make_bpe_model(node);
  if (type == "WordPiece") return std::make_unique<WordPieceModel>(node);
  if (type == "WordLevel") return std::make_unique<WordLevelModel>(node);
  if (type == "Unigram") return make_unigram_model(node);
  node.unsupported("model", type, "BPE, WordPiece, WordLevel, Unigram");
}

}  // namespace ingot::text::tokenizer
