// DecodeStream: the sliding window of ids behind streamed text (see decode_stream.h).
#include "ingot/text/decode_stream.h"

#include <string_view>

namespace ingot::text {
namespace {

// U+FFFD, what decode() shows for bytes that are not (yet) a whole UTF-8 character.
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Context ids kept from the constructor's `context`: enough for every supported decoder
// (they only look at the first token of a text or at single tokens), more when the tail
// would start inside a character or decode to nothing (skipped special tokens).
constexpr size_t kContextIds = 4;
constexpr size_t kMaxContextIds = 64;

// Pending ids after which text ending in U+FFFD is emitted anyway: a character takes at
// most 4 byte tokens, so this is invalid UTF-8 (or a U+FFFD the model wrote), and holding
// it longer would let the window grow without bound.
constexpr size_t kMaxPendingIds = 16;

}  // namespace

DecodeStream::DecodeStream(const Tokenizer& tokenizer, bool skip_special_tokens,
                           std::span<const int64_t> context)
    : tokenizer_(&tokenizer),
      skip_special_tokens_(skip_special_tokens),
      looks_ahead_(tokenizer.decode_looks_ahead()) {
  size_t start = context.size() > kContextIds ? context.size() - kContextIds : 0;
  for (;;) {
    context_text_ = decode(context.subspan(start), /*continued=*/true);
    const bool clean = !context_text_.empty() && !context_text_.starts_with(kReplacement);
    if (clean || start == 0 || context.size() - start >= kMaxContextIds) break;
    --start;
  }
  window_.assign(context.begin() + ptrdiff_t(start), context.end());
  context_ = window_.size();
}

std::string DecodeStream::decode(std::span<const int64_t> ids, bool continued) const {
  if (ids.empty()) return {};
  return continued ? tokenizer_->decode_continued(ids, skip_special_tokens_)
                   : tokenizer_->decode(ids, skip_special_tokens_);
}

std::string DecodeStream::step(int64_t id) {
  // An id that decode() drops changes no text: keeping it out keeps the window short.
  if (tokenizer_->decode_ignores(id, skip_special_tokens_)) return {};
  window_.push_back(id);
  // With a look-ahead decoder the newest id's text is final only once another follows.
  const size_t ready = looks_ahead_ ? window_.size() - 1 : window_.size();
  if (ready <= context_) return {};
  std::string text = decode(std::span<const int64_t>(window_).first(ready), /*continued=*/true);
  // Nothing new yet, or the text ends inside a character: hold the ids back (unless so
  // many are pending that this is not a character being completed, but invalid bytes).
  const bool incomplete = text.size() <= context_text_.size() || text.ends_with(kReplacement);
  if (incomplete && ready - context_ < kMaxPendingIds) return {};
  return emit(std::move(text), ready, /*continued=*/true);
}

std::string DecodeStream::flush() {
  if (pending() == 0) return {};
  return emit(decode(window_, /*continued=*/false), window_.size(), /*continued=*/false);
}

std::string DecodeStream::emit(std::string text, size_t ready, bool continued) {
  std::string piece;
  if (text.starts_with(context_text_)) {
    piece = text.substr(context_text_.size());
  } else {
    // The decoder changed text already streamed (see the header's exception): stream
    // the new ids on their own.
    piece =
        decode(std::span<const int64_t>(window_).subspan(context_, ready - context_), continued);
  }
  if (context_ == 0 && continued) {
    context_text_ = std::move(text);  // the new context is exactly what `text` decodes
  } else {
    window_.erase(window_.begin(), window_.begin() + ptrdiff_t(context_));
    ready -= context_;
    context_text_ = decode(std::span<const int64_t>(window_).first(ready), /*continued=*/true);
  }
  context_ = ready;
  return piece;
}

}  // namespace ingot::text
