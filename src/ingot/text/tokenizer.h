// Hugging Face tokenizers from tokenizer.json, encoding and decoding exactly like the
// `tokenizers` Python package (Tokenizer.encode(text, add_special_tokens).ids and
// Tokenizer.decode(ids, skip_special_tokens)).
//
// Supported components (anything else is a NotSupportedError naming the type and file):
//   normalizers     BertNormalizer, NFD, NFC, NFKD, NFKC, Lowercase, Strip, StripAccents,
//                   Replace, Prepend, Nmt, Precompiled (SentencePiece charsmaps), ByteLevel,
//                   Sequence
//   pre-tokenizers  ByteLevel, Split (PCRE2 regex), Metaspace, BertPreTokenizer, Whitespace,
//                   WhitespaceSplit, Digits, Punctuation, CharDelimiterSplit, Sequence
//   models          BPE (byte_fallback, fuse_unk, ignore_merges, subword prefix/suffix),
//                   WordPiece, WordLevel, Unigram (Viterbi, byte_fallback; T5 and other
//                   SentencePiece-unigram models)
//   post-processors TemplateProcessing (single sequence), BertProcessing,
//                   RobertaProcessing, ByteLevel, Sequence
//   decoders        ByteLevel, Metaspace, WordPiece, ByteFallback, Fuse, Strip, Replace,
//                   BPEDecoder, Sequence
// encode() never truncates or pads: the file's "truncation" and "padding" are ignored (as
// transformers does unless asked), and BPE dropout is not applied. Only single sequences
// are encoded (no pairs).
//
// A Tokenizer is immutable once loaded; encode/decode may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ingot::text {

class Tokenizer {
 public:
  // Reads a tokenizer.json. IoError (naming the file and field) when it cannot be read or
  // is malformed; NotSupportedError when it uses a component type ingot lacks.
  static Tokenizer from_file(const std::string& path);
  // Reads `folder`/tokenizer.json.
  static Tokenizer from_folder(const std::string& folder);
  // Parses tokenizer.json text; `origin` names it in errors.
  static Tokenizer from_json_text(const std::string& text, const std::string& origin);

  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Token ids of `text` (UTF-8; ValueError naming the byte offset when it is not). With
  // add_special_tokens the post-processor adds BOS/CLS/SEP as the file configures.
  std::vector<int64_t> encode(std::string_view text, bool add_special_tokens = true) const;

  // Text of `ids`: tokens (unknown ids skipped; special added tokens skipped when asked)
  // through the decoder chain, or joined with spaces when the file has no decoder.
  std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;
  // decode() of ids that more ids will follow (for streaming): where the decoder renders
  // the last token of a text specially (BPEDecoder drops its end-of-word suffix rather than
  // turning it into a space), the last id is rendered like any other. Equals decode() when
  // !decode_looks_ahead().
  std::string decode_continued(std::span<const int64_t> ids,
                               bool skip_special_tokens = false) const;
  // Whether decode() renders a token differently when no token follows it.
  bool decode_looks_ahead() const;
  // Whether decode() ignores `id` entirely: an unknown id, or a special token when
  // skipping them (the text of every sequence is the same without it).
  bool decode_ignores(int64_t id, bool skip_special_tokens) const;

  // Added tokens first, then the model vocabulary.
  std::optional<int64_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int64_t id) const;
  // Whether `id` is a special added token (what decode(..., true) skips).
  bool is_special(int64_t id) const;

  // Distinct tokens of the model vocabulary and the added tokens together
  // (tokenizers' get_vocab_size(with_added_tokens=True)).
  size_t vocab_size() const;
  // Size of the model vocabulary alone.
  size_t model_vocab_size() const;

  const std::string& origin() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ingot::text
