// `ingot generate (FOLDER | DIR) (--prompt TEXT | --chat MESSAGE [--system TEXT] |
// --messages FILE.json | --input NAME=FILE.npy ...)`: the flags become an
// app::GenerationRequest (app/generate.h, shared with the Python package); this file
// prints the streamed text and the closing line, or with --json one object (documented
// in docs/cli.md). FOLDER is a Hugging Face folder (exported in memory first); DIR holds
// the components written by `ingot export FOLDER --task generation -o DIR`.
#include "ingot/app/generate.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/models/gguf_folder.h"

namespace ingot::cli {

int run_generate(int argc, char** argv) {
  std::string source, messages_file;
  std::vector<std::string> input_specs;
  bool json = false, verbose = false;
  app::GenerationRequest r;
  CLI::App app{
      "Generates text with ingot's runtime: the prompt is prefilled in one call, then one token "
      "per "
      "step over a static KV cache written in place. Defaults come from the model's "
      "generation_config.json (eos tokens, sampling, max_new_tokens); flags override them.",
      "ingot generate"};
  app.add_option("model", source,
                 "Hugging Face model folder, a .gguf file, or a directory from ingot export --task "
                 "generation")
      ->required();
  auto* text =
      app.add_option("--prompt", r.prompt, "the prompt text (encoded with the model's tokenizer)");
  auto* chat_opt =
      app.add_option("--chat", r.chat, "a user message, rendered with the model's chat template");
  app.add_option("--system", r.system, "with --chat: a system message before it")->needs(chat_opt);
  auto* messages_opt = app.add_option(
      "--messages", messages_file, "a JSON list of {role, content} messages for the chat template");
  app.add_option("--image", r.images,
                 "an image file (PNG or JPEG) for a vision-language model, pre-processed as "
                 "preprocessor_config.json says; the prompt holds its placeholder (<image>) once")
      ->check(CLI::ExistingFile);
  auto* audio_opt = app.add_option(
      "--audio", r.audio,
      "an audio file (WAV) for a speech model (Whisper): downmixed, resampled and turned into "
      "log-mel input_features as preprocessor_config.json says");
  auto* inputs = app.add_option("--input", input_specs,
                                "NAME=FILE.npy: preprocessed inputs (input_ids, attention_mask, "
                                "pixel_values, image_grid_thw, mm_token_type_ids, input_features)");
  text->excludes(chat_opt, messages_opt, inputs);
  audio_opt->excludes(text, inputs, chat_opt, messages_opt);
  chat_opt->excludes(messages_opt, inputs);
  messages_opt->excludes(inputs);
  app.add_option("--max-new-tokens", r.max_new_tokens,
                 "tokens to generate at most (generation_config, else 64)");
  app.add_option("--max-cache-len", r.max_cache_len,
                 "KV cache slots: of the in-memory export of a FOLDER, or a dynamic-length DIR");
  app.add_option("--dtype", r.dtype,
                 "compute dtype of a decoder-only model FOLDER: auto (default: bfloat16 when "
                 "config.json says the checkpoint is stored in bfloat16, else float32), float32 "
                 "or bfloat16");
  bool greedy = false;
  app.add_flag("--greedy", greedy, "greedy decoding even where generation_config.json samples");
  app.add_option("--temperature", r.sampling.temperature, "sample with this temperature");
  app.add_option("--top-k", r.sampling.top_k, "sample from the k most likely tokens");
  app.add_option("--top-p", r.sampling.top_p,
                 "sample from the smallest set of tokens reaching this probability");
  app.add_option("--min-p", r.sampling.min_p,
                 "sample from tokens at least this fraction as likely as the best");
  app.add_option("--repetition-penalty", r.sampling.repetition_penalty,
                 "divide the logits of tokens seen so far by this");
  app.add_option("--seed", r.sampling.seed, "seed of the sampler (0)");
  app.add_flag("--ignore-eos", r.ignore_eos,
               "do not stop at end-of-sequence tokens (for benchmarks)");
  app.add_flag(
      "--json", json,
      "print one JSON object (prompt_ids, generated_ids, text, stop_reason, timings) instead of "
      "streaming");
  app.add_flag("--verbose", verbose,
               "print the rendered chat prompt and what the load-time passes did to stderr");
  if (!parse(app, argc, argv)) return 0;
  if (greedy) r.sampling.do_sample = false;
  if (!parse(app, argc, argv)) return 0;
  if (greedy) r.sampling.do_sample = false;
  for (const std::string& spec : input_specs)
    r.inputs.push_back(parse_input_spec(spec, "ingot generate"));
  if (!messages_file.empty()) {
    std::ifstream f(messages_file);
    INGOT_CHECK(f.good(), IoError, "[ingot generate] cannot read --messages '{}'", messages_file);
    std::stringstream content;
    content << f.rdbuf();
    r.messages_json = content.str();
    r.messages_source = messages_file;
  }
  // Load-time passes: all by default; the environment may turn some off for A/B runs.
  r.runtime = runtime::RuntimeOptions::from_environment();
  app::GenerationCallbacks callbacks;
  if (!json) {
    callbacks.on_prompt = [](const std::string& text) { std::printf("%s", text.c_str()); };
    callbacks.on_text = [](const std::string& text) {
      std::printf("%s", text.c_str());
      std::fflush(stdout);
    };
  }
  if (verbose)
    callbacks.on_info = [](const std::string& text) { std::fprintf(stderr, "%s", text.c_str()); };
  source = models::gguf_model_folder(source);  // a GGUF: as a folder of its own
  const app::GenerationResult result = app::generate(source, r, callbacks);
  if (json) {
    // Replace, not throw on, bytes of a character the last token left incomplete.
    std::printf(
        "%s\n",
        result.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("\n\n%s\n", result.summary().c_str());
  return 0;
}

}  // namespace ingot::cli
