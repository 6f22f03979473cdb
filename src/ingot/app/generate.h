// Request preparation and generation shared by `ingot generate` and the Python package:
// a prompt given as text, chat messages (rendered with the model's chat template),
// images, audio or preprocessed .npy inputs, options over the model's
// generation_config.json defaults, run on a model folder (exported in memory) or a
// generation directory, with the result as one typed object (and the --json object).
// The CLI keeps only flags and printing; Python passes the same request.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ingot/core/dtype.h"
#include "ingot/runtime/generator/generator.h"
#include "ingot/runtime/passes/runtime_options.h"

namespace ingot::app {

// Sampling flags over the model's defaults (runtime::Generator::default_options): a
// temperature / top-k / top-p / min-p samples; do_sample, when given, decides last
// (`--greedy` is do_sample = false).
struct SamplingFlags {
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<int64_t> top_k;
  std::optional<uint64_t> seed;
  std::optional<bool> do_sample;

  void apply(runtime::GenerateOptions& o) const;
};

// What to generate from, and how. Exactly one prompt form is given: `prompt` (text),
// `chat` [+ `system`], `messages_json`, `inputs`, or `audio` (with `images` beside a
// text or chat prompt of a vision-language model).
struct GenerationRequest {
  std::string prompt;               // text, encoded with the model's tokenizer
  std::string chat, system;         // a user message (+ system message) for the template
  std::string messages_json;        // a JSON list of {role, content} for the template
  std::string messages_source;      // where messages_json came from (named in errors)
  std::vector<std::string> images;  // image files (PNG / JPEG) of a vision-language prompt
  std::string audio;                // an audio file (WAV) of a speech model (Whisper)
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME -> FILE.npy

  // Options over the model's generation_config.json defaults.
  std::optional<int64_t> max_new_tokens, max_cache_len;
  SamplingFlags sampling;
  bool ignore_eos = false;     // do not stop at end tokens
  std::string dtype = "auto";  // a model folder's compute dtype: auto, float32, bfloat16
  runtime::RuntimeOptions runtime;

  bool templated() const { return !chat.empty() || !messages_json.empty(); }
};

// What the generation produced (the keys of `ingot generate --json`).
struct GenerationResult {
  bool encoder_decoder = false;
  std::vector<int64_t> prompt_ids;          // the prompt (an encoder-decoder's encoder ids)
  std::vector<int64_t> decoder_prompt_ids;  // encoder-decoder: what the decoder started from
  std::vector<int64_t> generated_ids;
  std::string text;  // the new tokens decoded, special tokens skipped
  runtime::GenerationStats stats;
  std::optional<DType> compute_dtype;  // a model folder's compute dtype

  nlohmann::json to_json() const;
  // The closing line `ingot generate` prints after the streamed text.
  std::string summary() const;
};

// Where the run reports as it goes; every callback is optional.
struct GenerationCallbacks {
  // The prompt text the generated text continues (a plain text prompt of a decoder), once,
  // before the first token.
  std::function<void(const std::string&)> on_prompt;
  // Text as each token completes it (a character split over tokens is held back), then
  // what is left at the end.
  std::function<void(const std::string&)> on_text;
  // Diagnostics (the rendered chat prompt, the load-time pass report).
  std::function<void(const std::string&)> on_info;
};

// Runs `request` on `source`: a generation directory (its manifest read first: another
// runtime's directory is refused before anything else) or a Hugging Face model folder
// (exported in memory, with the programs `ingot export --task generation` writes).
// ValueError / NotSupportedError naming the input, option or file at fault.
GenerationResult generate(const std::string& source, const GenerationRequest& request,
                          const GenerationCallbacks& callbacks = {});

}  // namespace ingot::app
