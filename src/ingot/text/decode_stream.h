// Incremental detokenisation for streaming generated text: one id in, the new text out,
// as the `tokenizers` package's DecodeStream does.
//
// Decoding only the new id is wrong (a SentencePiece decoder drops the leading space of
// the first token of a text; a byte-fallback or byte-level token may end inside a UTF-8
// character) and re-decoding everything is quadratic. A DecodeStream decodes a short
// window instead: the ids of the last emitted piece (the context) followed by the ids not
// yet emitted (pending), and emits decode(window) minus decode(context). The window then
// slides: the pending ids become the context. Each step decodes a few ids, so the cost per
// token is O(1) amortised, independent of the length of the text.
//
// Invariants:
//   - a piece never ends inside a UTF-8 character: while decode(window) ends with U+FFFD
//     (an incomplete character, which the decoders show as U+FFFD), the ids are held back
//     until a later id completes it or flush() is called; after 16 pending ids the text
//     is emitted as it is (invalid bytes, not a character in the making);
//   - concatenating every step() and a final flush() gives decode(context + ids) minus
//     decode(context), i.e. decode(ids) without a context: no text lost or repeated;
//   - ids that decode() ignores (unknown ids; special tokens with skip_special_tokens)
//     never enter the window;
//   - with a decoder that renders a text's last token specially (BPEDecoder: its
//     end-of-word suffix becomes a space, except at the end), the newest id is held back
//     until the next one shows how it renders (Tokenizer::decode_looks_ahead).
// One exception to equality: a byte-fallback run that first decodes as valid text and
// then turns into invalid UTF-8 (the model produced invalid bytes). decode() then
// replaces the whole run by U+FFFD; text already streamed cannot be retracted, so the
// stream shows the new ids' own decode instead (nothing is repeated or dropped).
//
// A DecodeStream holds a reference to its Tokenizer, which must outlive it. It is not
// thread-safe (one stream per generation); the Tokenizer may be shared by many streams.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ingot/text/tokenizer.h"

namespace ingot::text {

class DecodeStream {
 public:
  // `context`: ids whose text was already shown (the prompt): the stream continues their
  // text, e.g. the space before a first generated word that a SentencePiece decoder would
  // drop at the start of a text is kept. Only the last few context ids are kept.
  explicit DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens = false,
                        std::span<const int64_t> context = {});

  // The text that `id` adds: empty while it ends inside a character (or adds no text,
  // e.g. a special token with skip_special_tokens).
  std::string step(int64_t id);

  // Ends the text: the text still held back (an incomplete character, as decode() shows it:
  // U+FFFD; the last id of a look-ahead decoder), empty when nothing is pending. Ids
  // stepped afterwards continue after it.
  std::string flush();

  // Number of ids whose text has not been emitted yet.
  size_t pending() const { return window_.size() - context_; }

  // Sliding window of the context ids [0, context_) and the pending ids after them.
  std::span<const int64_t> window() const { return window_; }

 private:
  // decode() or, with `continued`, Tokenizer::decode_continued() (more ids follow).
  std::string decode(std::span<const int64_t> ids, bool continued) const;
  // `text` decodes window_[0, ready): emits it minus the context text and makes
  // window_[context_, ready) the context.
  std::string emit(std::string text, size_t ready, bool continued);

  const Tokenizer* tokenizer_;
  bool skip_special_tokens_;
  bool looks_ahead_;  // Tokenizer::decode_looks_ahead(): the newest id is held back
  std::vector<int64_t> window_;
  size_t context_ = 0;        // ids at the front of window_ whose text was emitted
  std::string context_text_;  // decode(window_[0, context_))
};

}  // namespace ingot::text
