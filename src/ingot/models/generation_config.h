// A model's default generation settings: generation_config.json (what transformers'
// GenerationConfig.save_pretrained writes next to config.json), with the special token
// ids completed from config.json as transformers does.
//
// Every field is optional: nullopt means the files do not set it (a JSON null is the same
// as an absent key), and the caller keeps its own default (transformers': greedy,
// temperature 1, top_k 50, top_p 1, min_p off, repetition_penalty 1, max_length 20).
// Values are checked for their JSON type only; ranges are checked where they are used
// (sampling), as transformers does, so e.g. the pad_token_id -1 of old Llama configs
// reads fine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ingot::text {
class Tokenizer;
}  // namespace ingot::text

namespace ingot::models {

struct GenerationConfig {
  // eos_token_id: one id or a list (generation stops at any of them).
  std::optional<std::vector<int64_t>> eos_token_ids;
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> pad_token_id;
  // Encoder-decoder models: the decoder's first input (T5: the pad id).
  std::optional<int64_t> decoder_start_token_id;
  std::optional<bool> do_sample;
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repetition_penalty;
  std::optional<int64_t> max_new_tokens;
  std::optional<int64_t> max_length;  // prompt + new tokens

  // Parses one generation_config.json. IoError naming the file when it cannot be read, is
  // not JSON or not an object; ValueError naming the file and the key when a value has
  // the wrong type (e.g. "temperature" a string, "eos_token_id" a list with a non-integer).
  // Keys ingot does not use are ignored.
  static GenerationConfig from_file(const std::string& path);
  static GenerationConfig from_json_text(const std::string& text, const std::string& origin);

  // `folder`/generation_config.json (all fields unset when the file is absent: not an
  // error), then what transformers takes from `folder`/config.json when the folder has
  // one (see fill_from_model_config).
  static GenerationConfig from_folder(const std::string& folder);

  // transformers' fallback to the model config: when generation_config.json is absent,
  // transformers builds the generation config from config.json
  // (GenerationConfig.from_model_config): every generation key config.json sets (not
  // null) at its top level, then what is still unset from the first non-empty sub-config
  // among "decoder", "generator", "text_config" (multimodal models). With a
  // generation_config.json, config.json is not read at all. `model_config_text` is the
  // config.json text, `origin` its name for errors (IoError / ValueError as above).
  void fill_from_model_config(const std::string& model_config_text, const std::string& origin);

  // The number of new tokens these settings allow after a prompt of `prompt_tokens`:
  // max_new_tokens when set, else max_length - prompt_tokens (at least 0) when set, else
  // nullopt (transformers: max_new_tokens takes precedence over max_length). ValueError
  // when prompt_tokens < 0.
  std::optional<int64_t> new_token_limit(int64_t prompt_tokens) const;
};

// The stop tokens of a model whose files name no eos_token_id: the ids of the usual
// end-of-text tokens ("<|endoftext|>", "</s>", "<|im_end|>", "<|eot_id|>") that the
// vocabulary has, in that order.
std::vector<int64_t> conventional_stop_tokens(const text::Tokenizer& tokenizer);

}  // namespace ingot::models
