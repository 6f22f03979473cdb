// The stages of a Hugging Face tokenizer pipeline, as tokenizer.json describes them:
//
//   added tokens split out of the raw text -> normalizer -> added tokens split out of the
//   normalized text -> pre-tokenizer (pieces) -> model (ids per piece) -> post-processor
//   (BOS/CLS/SEP) ... and back: ids -> tokens -> decoder chain -> text.
//
// Each stage is an interface with one implementation per tokenizer.json "type"; the
// make_* factories read a component from JSON and throw NotSupportedError for types that
// ingot does not implement. Components are immutable after loading and safe to share
// between threads (the BPE word cache locks internally).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/text/tokenizer/regex.h"

namespace ingot::text::tokenizer {

class JsonNode;

// Normalized text that the pre-tokenizer splits further and the model then encodes.
struct Piece {
  std::string text;
  // Whether the piece starts at byte 0 of the original input (Metaspace's
  // prepend_scheme "first" only prepends there).
  bool at_origin = false;
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

SplitBehavior split_behavior_from_json(const JsonNode& node);

// Splits `piece` along `spans` (which cover its text) as tokenizers'
// NormalizedString::split does, appending the non-empty results to `out`.
void split_piece(const Piece& piece, const std::vector<Span>& spans, SplitBehavior behavior,
                 std::vector<Piece>& out);

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Replaces `pieces` by their finer split.
  virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the ids of one pre-tokenized, non-empty piece.
  virtual void tokenize(std::string_view piece, std::vector<int64_t>& ids) const = 0;
  virtual std::optional<int64_t> token_to_id(std::string_view token) const = 0;
  virtual const std::string* id_to_token(int64_t id) const = 0;
  virtual size_t vocab_size() const = 0;
  // Every (token, id) of the vocabulary, in no particular order.
  virtual std::vector<std::pair<std::string, int64_t>> vocab() const = 0;
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Adds the special tokens of a single sequence around `ids` when `add_special_tokens`.
  virtual void process(std::vector<int64_t>& ids, bool add_special_tokens) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
  // decode_chain of tokens that more tokens will follow: a decoder that renders a text's
  // last token specially (BPEDecoder) renders the last one like any other.
  virtual void decode_chain_continued(std::vector<std::string>& tokens) const {
    decode_chain(tokens);
  }
  // Whether decode_chain_continued can differ from decode_chain.
  virtual bool looks_ahead() const { return false; }
};

std::unique_ptr<Normalizer> make_normalizer(const JsonNode& node);
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const JsonNode& node);
std::unique_ptr<Model> make_model(const JsonNode& node);
std::unique_ptr<PostProcessor> make_post_processor(const JsonNode& node);
std::unique_ptr<Decoder> make_decoder(const JsonNode& node);

// GPT-2's byte <-> printable character table (ByteLevel pre-tokenizer/normalizer/decoder).
struct ByteLevelAlphabet {
  std::string byte_to_utf8[256];  // the character standing for each byte, UTF-8 encoded
  int16_t char_to_byte[0x144];    // inverse, -1 where a character is not in the table
  static const ByteLevelAlphabet& get();
};

// Maps every byte of `text` to its ByteLevel character.
std::string byte_level_encode(std::string_view text);

}  // namespace ingot::text::tokenizer
