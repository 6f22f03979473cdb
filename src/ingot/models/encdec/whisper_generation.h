// Whisper's decoding settings from generation_config.json, as transformers'
// WhisperGenerationMixin.generate uses them for short-form (<= 30 s) audio:
//
//   the decoder prompt (_retrieve_init_tokens):
//     [decoder_start_token_id (<|startoftranscript|>),
//      the language token: lang_to_id[language] (language "<|de|>", "de" or "german"),
//        or, with neither language nor forced_decoder_ids, the detected language when
//        the model is multilingual (lang_to_id present): the decoder's first logits
//        after [decoder_start_token_id], argmax over the lang_to_id ids,
//      the task token: task_to_id[task]; with a language but no task, "transcribe",
//      <|notimestamps|> (no_timestamps_token_id) unless return_timestamps]
//     Without language and task, forced_decoder_ids ([[1, id], [2, id], ...]) give the
//     tokens after the start token (older checkpoints).
//   the logits processors: suppress_tokens (-inf at every step) and
//     begin_suppress_tokens (-inf at the first generated token only).
//
// Timestamp decoding (return_timestamps: WhisperTimeStampLogitsProcessor), long-form
// audio (> 30 s, sliding windows), prompt_ids and temperature fallback are not
// implemented; return_timestamps true is a NotSupportedError where generation starts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::models {

struct WhisperGenerationConfig {
  int64_t decoder_start_token_id = 50258;
  std::optional<std::string> language, task;
  std::map<std::string, int64_t> lang_to_id, task_to_id;
  std::optional<int64_t> no_timestamps_token_id;
  bool return_timestamps = false;
  std::vector<std::pair<int64_t, int64_t>> forced_decoder_ids;  // (position, token)
  std::vector<int64_t> suppress_tokens, begin_suppress_tokens;
  std::vector<int64_t> eos_token_ids;
  std::optional<int64_t> max_length, max_new_tokens;

  // FOLDER/generation_config.json; without one, the same keys from config.json
  // (transformers' from_model_config). IoError naming the file when it is malformed.
  static WhisperGenerationConfig from_folder(const std::string& folder);
  static WhisperGenerationConfig from_json_text(const std::string& text, const std::string& origin);

  // Whether the prompt needs the language detected from the audio.
  bool needs_language_detection() const;
  // The language token's id for `language` ("<|fr|>", "fr" or "french", any case).
  // ValueError naming the language when it is unknown or not in lang_to_id.
  int64_t language_id(const std::string& language) const;
  // The decoder prompt. `detect_language` is called (once) only when
  // needs_language_detection(): given the decoder's logits [vocab] after
  // [decoder_start_token_id], the lang_to_id id with the largest logit is used.
  std::vector<int64_t> decoder_prompt(const std::function<Tensor()>& first_logits = nullptr) const;
  // The logits processors on one step's logits [vocab] (float32, in place):
  // `generated` is the number of tokens generated before this step.
  void suppress(Tensor& logits, int64_t generated) const;
};

}  // namespace ingot::models
