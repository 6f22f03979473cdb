// `ingot generate (FOLDER | DIR) (--prompt TEXT | --chat MESSAGE [--system TEXT] |
// --messages FILE.json | --input NAME=FILE.npy ...)`: greedy or sampled generation with
// the model's generation_config.json defaults, streaming text as each token completes,
// then prefill and decode tokens per second; with --json one JSON object instead
// (documented in docs/cli.md).
// FOLDER is a Hugging Face folder (exported in memory first); DIR holds the components
// written by `ingot export FOLDER --task generation -o DIR`.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/generation/manifest.h"
#include "ingot/media/image_processor.h"
#include "ingot/media/qwen2_vl_processor.h"
#include "ingot/media/whisper_features.h"
#include "ingot/models/config.h"
#include "ingot/models/encoder_decoder.h"
#include "ingot/models/generation_config.h"
#include "ingot/models/vision_language.h"
#include "ingot/models/whisper_generation.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"
#include "ingot/text/chat_template.h"
#include "ingot/text/decode_stream.h"
#include "ingot/text/tokenizer.h"

namespace ingot::cli {

namespace {

// The image inputs of a vision-language prompt: pixel_values ([images, C, H, W], or a
// patch-input model's [patches, C*T*P*P] with image_grid_thw [images, 3]).
struct ImageTensors {
  Tensor pixel_values, image_grid_thw;
};

// The prompt ids from --input NAME=FILE.npy: input_ids [1, n] (int64 or int32), and an
// attention_mask, which must be all ones (the decode graphs take unpadded prompts);
// pixel_values (float, the processor's) and a patch-input model's image_grid_thw into
// `images`; mm_token_type_ids, checked against the image tokens of input_ids.
std::vector<int64_t> prompt_from_inputs(const std::vector<std::string>& specs, bool vision_language,
                                        bool patch_input, ImageTensors& images) {
  std::vector<int64_t> ids, token_types;
  bool have_ids = false;
  std::string types_file;
  for (const std::string& spec : specs) {
    const auto [name, file] = parse_input_spec(spec, "ingot generate");
    const bool image_input =
        name == "pixel_values" || name == "image_grid_thw" || name == "mm_token_type_ids";
    INGOT_CHECK(!image_input || vision_language, ValueError,
                "[ingot generate] no input named '{}': the model is not a vision-language model "
                "(inputs: input_ids, attention_mask)",
                name);
    INGOT_CHECK(name != "image_grid_thw" || patch_input, ValueError,
                "[ingot generate] no input named 'image_grid_thw': this model takes pixel_values "
                "[images, channels, height, width] alone");
    Tensor t = formats::load_npy(file);
    if (name == "pixel_values") {
      const int64_t rank = patch_input ? 2 : 4;
      INGOT_CHECK(is_floating(t.dtype()) && t.dim() == rank, ShapeError,
                  "[ingot generate] input 'pixel_values' from '{}' is {} {}; expected float {} as "
                  "the processor makes it",
                  file, dtype_name(t.dtype()), t.shape_string(),
                  patch_input ? "[patches, C*T*P*P] (with image_grid_thw)"
                              : "[images, channels, height, width]");
      images.pixel_values = contiguous(to(t, DType::F32));
      continue;
    }
    if (name == "image_grid_thw") {
      INGOT_CHECK(
          (t.dtype() == DType::I64 || t.dtype() == DType::I32) && t.dim() == 2 && t.size(1) == 3,
          ShapeError,
          "[ingot generate] input 'image_grid_thw' from '{}' is {} {}; expected int64 "
          "[images, 3] (t, h, w patches per image)",
          file, dtype_name(t.dtype()), t.shape_string());
      images.image_grid_thw = contiguous(to(t, DType::I64));
      continue;
    }
    INGOT_CHECK(t.dtype() == DType::I64 || t.dtype() == DType::I32, DTypeError,
                "[ingot generate] input '{}' from '{}' has dtype {}; expected int64 (or int32)",
                name, file, dtype_name(t.dtype()));
    INGOT_CHECK(t.dim() == 2 && t.size(0) == 1, ShapeError,
                "[ingot generate] input '{}' from '{}' is {}; expected [1, tokens] (batch 1)", name,
                file, t.shape_string());
    t = contiguous(to(t, DType::I64));
    const int64_t* p = t.data<int64_t>();
    if (name == "input_ids") {
      ids.assign(p, p + t.numel());
      have_ids = true;
    } else if (name == "mm_token_type_ids") {
      token_types.assign(p, p + t.numel());
      types_file = file;
    } else if (name == "attention_mask") {
      for (int64_t i = 0; i < t.numel(); ++i) {
        INGOT_CHECK(p[i] == 1, NotSupportedError,
                    "[ingot generate] attention_mask from '{}' masks position {}; the generation "
                    "components take unpadded prompts (drop the padding from input_ids)",
                    file, i);
      }
    } else {
      INGOT_THROW(ValueError,
                  "[ingot generate] no input named '{}' (inputs: input_ids, attention_mask, "
                  "pixel_values, image_grid_thw, mm_token_type_ids)",
                  name);
    }
  }
  INGOT_CHECK(have_ids, ValueError, "[ingot generate] --input needs input_ids=FILE.npy");
  INGOT_CHECK(images.pixel_values.defined() == images.image_grid_thw.defined() || !patch_input,
              ValueError,
              "[ingot generate] this model takes pixel_values with image_grid_thw: give both "
              "--input pixel_values=FILE.npy and --input image_grid_thw=FILE.npy");
  INGOT_CHECK(token_types.empty() || token_types.size() == ids.size(), ShapeError,
              "[ingot generate] mm_token_type_ids from '{}' has {} entries for {} input_ids",
              types_file, token_types.size(), ids.size());
  return ids;
}

// Checks mm_token_type_ids (1 exactly at the image tokens) when given.
void check_token_types(const std::vector<std::string>& specs, const std::vector<int64_t>& ids,
                       int64_t image_token_id) {
  for (const std::string& spec : specs) {
    const auto [name, file] = parse_input_spec(spec, "ingot generate");
    if (name != "mm_token_type_ids") continue;
    Tensor t = contiguous(to(formats::load_npy(file), DType::I64));
    const int64_t* p = t.data<int64_t>();
    for (size_t i = 0; i < ids.size() && i < size_t(t.numel()); ++i) {
      INGOT_CHECK((p[i] == 1) == (ids[i] == image_token_id) && (p[i] == 0 || p[i] == 1), ValueError,
                  "[ingot generate] mm_token_type_ids from '{}' is {} at position {} where "
                  "input_ids has {} (image token id {}); only images are supported (1 at image "
                  "tokens, 0 elsewhere)",
                  file, p[i], i, ids[i], image_token_id);
    }
  }
}

// The image placeholder of a Qwen2-VL processor: processor_config.json's image_token,
// else Qwen2VLProcessor's default.
std::string qwen2_vl_image_token(const std::string& source) {
  std::ifstream f(std::filesystem::path(source) / "processor_config.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("image_token") && j["image_token"].is_string())
    return j["image_token"].get<std::string>();
  return "<|image_pad|>";
}

// The kind of model `source` holds: the pipeline of a generation directory's manifest
// (read before anything else, so a directory of another runtime's components or another
// manifest version is refused first), or config.json's vision_config /
// is_encoder_decoder for a model folder.
generation::PipelineKind source_kind(const std::string& source, bool exported) {
  if (exported) return generation::GenerationManifest::read(source).kind();
  std::ifstream f(std::filesystem::path(source) / "config.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return generation::PipelineKind::kDecoderOnly;
  if (j.value("is_encoder_decoder", false)) return generation::PipelineKind::kEncoderDecoder;
  return j.contains("vision_config") ? generation::PipelineKind::kVisionLanguage
                                     : generation::PipelineKind::kDecoderOnly;
}

// An encoder-decoder's encoder input from --input NAME=FILE.npy: `encoder_input`
// (input_ids [1, source] int64 / int32 for T5; a float tensor such as Whisper's
// input_features as stored), and an attention_mask, which must be all ones.
Tensor encoder_input_from_specs(const std::vector<std::string>& specs,
                                const std::string& encoder_input) {
  Tensor input;
  for (const std::string& spec : specs) {
    const auto [name, file] = parse_input_spec(spec, "ingot generate");
    Tensor t = formats::load_npy(file);
    if (name == "attention_mask") {
      Tensor m = contiguous(to(t, DType::I64));
      for (int64_t i = 0; i < m.numel(); ++i) {
        INGOT_CHECK(m.data<int64_t>()[i] == 1, NotSupportedError,
                    "[ingot generate] attention_mask from '{}' masks position {}; the encoder "
                    "component takes one unpadded input (drop the padding)",
                    file, i);
      }
      continue;
    }
    INGOT_CHECK(name == encoder_input, ValueError,
                "[ingot generate] no input named '{}': this encoder-decoder model's encoder takes "
                "'{}' (and attention_mask, all ones)",
                name, encoder_input);
    INGOT_CHECK(t.dim() >= 2 && t.size(0) == 1, ShapeError,
                "[ingot generate] input '{}' from '{}' is {}; expected batch 1 ([1, ...])", name,
                file, t.shape_string());
    if (t.dtype() == DType::I32 || t.dtype() == DType::I64) {
      input = contiguous(to(t, DType::I64));
    } else {
      INGOT_CHECK(is_floating(t.dtype()), DTypeError,
                  "[ingot generate] input '{}' from '{}' has dtype {}; expected integer ids or "
                  "float features",
                  name, file, dtype_name(t.dtype()));
      input = contiguous(to(t, DType::F32));
    }
  }
  INGOT_CHECK(input.defined(), ValueError,
              "[ingot generate] the encoder input is missing: give --input {}=FILE.npy (or "
              "--prompt TEXT)",
              encoder_input);
  return input;
}

// The prompt text of --chat / --system / --messages: the model's chat template applied
// with add_generation_prompt, as transformers' apply_chat_template(tokenize=False).
std::string chat_prompt(const std::string& source, const std::string& chat,
                        const std::string& system, const std::string& messages_file) {
  text::ChatTemplate t = text::ChatTemplate::from_folder(source);
  if (!messages_file.empty()) {
    std::ifstream f(messages_file);
    INGOT_CHECK(f.good(), IoError, "[ingot generate] cannot read --messages '{}'", messages_file);
    std::stringstream text;
    text << f.rdbuf();
    return t.render_values(text::ChatTemplate::messages_from_json(text.str(), messages_file), true);
  }
  std::vector<text::ChatMessage> messages;
  if (!system.empty()) messages.push_back({"system", system});
  messages.push_back({"user", chat});
  return t.render(messages, true);
}

// The compute dtype of a decoder-only model folder's in-memory export: `flag` (--dtype),
// or for "auto" bfloat16 when config.json says the checkpoint is stored in bfloat16 (its
// dtype, or the older torch_dtype; transformers' dtype="auto" loads it so) — the bf16
// kernels are ingot's fast path — and float32 otherwise.
DType generate_compute_dtype(const std::string& folder, const std::string& flag) {
  if (flag != "auto") {
    const DType d = parse_dtype(flag);
    INGOT_CHECK(d == DType::F32 || d == DType::BF16, ValueError,
                "[ingot generate] --dtype {}: expected auto, float32 or bfloat16", flag);
    return d;
  }
  const auto config =
      models::ConfigReader::from_file((std::filesystem::path(folder) / "config.json").string());
  const std::string stored = config.get_string("dtype", config.get_string("torch_dtype", ""));
  return stored == "bfloat16" ? DType::BF16 : DType::F32;
}

// The generated ids, collected by the Generator's on_token callback; unless `quiet`
// (--json), each token's text is printed as soon as it is complete (DecodeStream holds
// back a character split over tokens), continuing the text of `context`.
struct TokenStream {
  TokenStream(const text::Tokenizer& tokenizer, const std::vector<int64_t>& context, bool quiet)
      : stream(tokenizer, /*skip_special_tokens=*/true, context), quiet(quiet) {}
  std::function<void(int64_t)> callback() {
    return [this](int64_t token) {
      ids.push_back(token);
      if (quiet) return;
      std::printf("%s", stream.step(token).c_str());
      std::fflush(stdout);
    };
  }
  std::vector<int64_t> ids;
  text::DecodeStream stream;
  bool quiet;
};

// `ingot generate` for an encoder-decoder model: the prompt (tokenized with its special
// tokens, T5's </s>) or --input is the encoder's input; the decoder starts from the
// decoder prompt (decoder_start_token_id) and decodes greedily (the model's eos tokens
// stop it). The text printed is the decoder's output alone.
int generate_encoder_decoder(const std::string& source, bool exported,
                             const text::Tokenizer& tokenizer, const std::string& prompt,
                             const std::vector<std::string>& input_specs,
                             const std::string& audio_file, std::optional<int64_t> max_new_tokens,
                             std::optional<int64_t> max_cache_len, bool json,
                             const runtime::RuntimeOptions& runtime_options) {
  std::optional<runtime::Generator> gen;
  if (exported) gen.emplace(runtime::Generator::load(source, max_cache_len, runtime_options));
  const models::GenerationConfig defaults =
      exported ? gen->generation_config() : models::GenerationConfig::from_folder(source);
  std::vector<int64_t> decoder_prompt;
  std::string encoder_input = "input_ids";
  std::shared_ptr<models::PretrainedModel> model;
  if (exported) {
    decoder_prompt = gen->decoder_prompt();
    encoder_input = gen->encoder_input_name();
  } else {
    model = models::from_pretrained(source);
    auto* encdec = dynamic_cast<models::EncoderDecoderModel*>(model.get());
    INGOT_CHECK(encdec != nullptr, NotSupportedError,
                "[ingot generate] '{}' says is_encoder_decoder but {} is not an encoder-decoder "
                "model ingot can run",
                source, model->architecture());
    decoder_prompt = encdec->decoder_prompt(source);
    encoder_input = encdec->encoder_input().name;
  }
  Tensor input;
  std::vector<int64_t> ids;
  if (!audio_file.empty()) {
    // Whisper: the audio file through the feature extractor of preprocessor_config.json.
    INGOT_CHECK(encoder_input == "input_features", ValueError,
                "[ingot generate] --audio is for speech models whose encoder takes "
                "input_features; this model's takes '{}'",
                encoder_input);
    INGOT_CHECK(
        input_specs.empty(), ValueError,
        "[ingot generate] give either --audio or --input input_features=FILE.npy, not both");
    input = media::WhisperFeatureExtractor::from_folder(source).preprocess_file(audio_file);
  } else if (!input_specs.empty()) {
    input = encoder_input_from_specs(input_specs, encoder_input);
  } else {
    INGOT_CHECK(encoder_input == "input_ids", ValueError,
                "[ingot generate] this model's encoder takes '{}', not text: give --input "
                "{}=FILE.npy",
                encoder_input, encoder_input);
    ids = tokenizer.encode(prompt, /*add_special_tokens=*/true);
    INGOT_CHECK(!ids.empty(), ValueError,
                "[ingot generate] the prompt encodes to no tokens; give some text");
    input = Tensor::from_vector(ids, {1, int64_t(ids.size())});
  }
  if (input.dtype() == DType::I64) {
    ids.assign(input.data<int64_t>(), input.data<int64_t>() + input.numel());
  }
  const int64_t new_tokens = max_new_tokens.value_or(
      defaults.new_token_limit(int64_t(decoder_prompt.size())).value_or(64));
  if (!exported) {
    exporters::GenerationExportOptions o;
    // A Whisper prompt completed after language detection grows by up to 3 tokens
    // (language, task, no-timestamps): room for them.
    const int64_t prompt_room =
        int64_t(decoder_prompt.size()) + (encoder_input == "input_features" ? 3 : 0);
    o.max_cache_len = max_cache_len.value_or(std::max<int64_t>(prompt_room + new_tokens + 1, 8));
    o.model_folder = source;
    gen.emplace(exporters::NativeExporter()
                    .export_for_generation(*model, exporters::NativeExportConfig(), o)
                    .package(),
                std::nullopt, runtime_options);
    gen->set_generation_config(defaults);
  }
  runtime::GenerateOptions go = gen->default_options(int64_t(decoder_prompt.size()), new_tokens);
  go.max_new_tokens = new_tokens;
  go.do_sample = false;
  if (encoder_input == "input_features") {
    // Whisper's logits processors (generation_config.json's suppress lists).
    const auto whisper = models::WhisperGenerationConfig::from_folder(source);
    go.suppress_tokens = whisper.suppress_tokens;
    go.begin_suppress_tokens = whisper.begin_suppress_tokens;
    if (whisper.needs_language_detection()) {
      gen->set_decoder_prompt_builder([whisper](const std::function<Tensor()>& first) {
        return whisper.decoder_prompt(first);
      });
    }
  }
  TokenStream generated(tokenizer, decoder_prompt, json);
  go.on_token = generated.callback();
  runtime::GenerationStats stats;
  gen->generate_from_encoder_input(input, go, &stats);
  decoder_prompt = gen->last_decoder_prompt();  // Whisper: with the detected language
  if (json) {
    nlohmann::json out = {{"prompt_ids", ids},
                          {"decoder_prompt_ids", decoder_prompt},
                          {"generated_ids", generated.ids},
                          {"text", tokenizer.decode(generated.ids, true)},
                          {"stop_reason", stats.stop_reason},
                          {"new_tokens", stats.new_tokens},
                          {"time_to_first_token_s", stats.prefill_seconds},
                          {"decode_tokens_per_s", stats.decode_tokens_per_second()}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("%s\n\n[%lld encoder tokens, %lld new tokens (%s); decode %.1f tokens/s]\n",
              generated.stream.flush().c_str(), (long long)ids.size(), (long long)stats.new_tokens,
              stats.stop_reason.c_str(), stats.decode_tokens_per_second());
  return 0;
}

}  // namespace

int run_generate(int argc, char** argv) {
  std::string source, prompt, chat, system, messages_file;
  std::vector<std::string> input_specs;
  std::optional<int64_t> max_new_tokens, max_cache_len, top_k;
  std::optional<double> temperature, top_p, min_p, repetition_penalty;
  std::optional<uint64_t> seed;
  bool greedy = false, ignore_eos = false, json = false, verbose = false;
  CLI::App app{
      "Generates text with ingot's runtime: the prompt is prefilled in one call, then one token "
      "per "
      "step over a static KV cache written in place. Defaults come from the model's "
      "generation_config.json (eos tokens, sampling, max_new_tokens); flags override them.",
      "ingot generate"};
  app.add_option("model", source,
                 "Hugging Face model folder, or a directory from ingot export --task generation")
      ->required();
  auto* text =
      app.add_option("--prompt", prompt, "the prompt text (encoded with the model's tokenizer)");
  auto* chat_opt =
      app.add_option("--chat", chat, "a user message, rendered with the model's chat template");
  app.add_option("--system", system, "with --chat: a system message before it")->needs(chat_opt);
  auto* messages_opt = app.add_option(
      "--messages", messages_file, "a JSON list of {role, content} messages for the chat template");
  std::vector<std::string> image_files;
  app.add_option("--image", image_files,
                 "an image file (PNG or JPEG) for a vision-language model, pre-processed as "
                 "preprocessor_config.json says; the prompt holds its placeholder (<image>) once")
      ->check(CLI::ExistingFile);
  std::string audio_file;
  auto* audio_opt = app.add_option(
      "--audio", audio_file,
      "an audio file (WAV) for a speech model (Whisper): downmixed, resampled and turned into "
      "log-mel input_features as preprocessor_config.json says");
  auto* inputs = app.add_option("--input", input_specs,
                                "NAME=FILE.npy: preprocessed inputs (input_ids, attention_mask, "
                                "pixel_values, image_grid_thw, mm_token_type_ids, input_features)");
  text->excludes(chat_opt, messages_opt, inputs);
  audio_opt->excludes(text, inputs, chat_opt, messages_opt);
  chat_opt->excludes(messages_opt, inputs);
  messages_opt->excludes(inputs);
  app.add_option("--max-new-tokens", max_new_tokens,
                 "tokens to generate at most (generation_config, else 64)");
  app.add_option("--max-cache-len", max_cache_len,
                 "KV cache slots: of the in-memory export of a FOLDER, or a dynamic-length DIR");
  std::string dtype = "auto";
  app.add_option("--dtype", dtype,
                 "compute dtype of a decoder-only model FOLDER: auto (default: bfloat16 when "
                 "config.json says the checkpoint is stored in bfloat16, else float32), float32 "
                 "or bfloat16");
  app.add_flag("--greedy", greedy, "greedy decoding even where generation_config.json samples");
  app.add_option("--temperature", temperature, "sample with this temperature");
  app.add_option("--top-k", top_k, "sample from the k most likely tokens");
  app.add_option("--top-p", top_p,
                 "sample from the smallest set of tokens reaching this probability");
  app.add_option("--min-p", min_p,
                 "sample from tokens at least this fraction as likely as the best");
  app.add_option("--repetition-penalty", repetition_penalty,
                 "divide the logits of tokens seen so far by this");
  app.add_option("--seed", seed, "seed of the sampler (0)");
  app.add_flag("--ignore-eos", ignore_eos,
               "do not stop at end-of-sequence tokens (for benchmarks)");
  app.add_flag(
      "--json", json,
      "print one JSON object (prompt_ids, generated_ids, text, stop_reason, timings) instead of "
      "streaming");
  app.add_flag("--verbose", verbose,
               "print the rendered chat prompt and what the load-time passes did to stderr");
  if (!parse(app, argc, argv)) return 0;
  INGOT_CHECK(!prompt.empty() || !chat.empty() || !messages_file.empty() || !input_specs.empty() ||
                  !audio_file.empty(),
              ValueError,
              "[ingot generate] give --prompt TEXT, --chat MESSAGE, --messages FILE.json, --audio "
              "FILE.wav or --input "
              "input_ids=FILE.npy (see 'ingot generate --help')");

  INGOT_CHECK(!max_new_tokens || *max_new_tokens >= 1, ValueError,
              "[ingot generate] --max-new-tokens must be at least 1 (got {})", *max_new_tokens);
  INGOT_CHECK(!max_cache_len || *max_cache_len >= 8, ValueError,
              "[ingot generate] --max-cache-len must be at least 8 (got {})", *max_cache_len);
  // Load-time passes: all by default; the environment may turn some off for A/B runs.
  const runtime::RuntimeOptions runtime_options = runtime::RuntimeOptions::from_environment();
  const bool exported = generation::is_generation_directory(source);
  // A generation directory's manifest first: another runtime's components, or a manifest
  // of another version, are refused before the tokenizer and template are read.
  const generation::PipelineKind kind = source_kind(source, exported);
  if (exported) {
    const generation::GenerationManifest manifest = generation::GenerationManifest::read(source);
    INGOT_CHECK(manifest.export_format == "native", NotSupportedError,
                "[ingot generate] '{}' holds {} components, which ingot's runtime does not run; "
                "export with --format native (or run them with their own runtime)",
                source, manifest.export_format);
  }
  text::Tokenizer tokenizer = text::Tokenizer::from_folder(source);
  const bool templated = !chat.empty() || !messages_file.empty();
  if (templated) prompt = chat_prompt(source, chat, system, messages_file);
  if (verbose && templated) std::fprintf(stderr, "[prompt]\n%s\n[/prompt]\n", prompt.c_str());
  // A rendered template holds its special tokens (BOS) already, as transformers'
  // apply_chat_template(tokenize=True) assumes.
  // An encoder-decoder model: the prompt or --input is the encoder's input.
  const bool encoder_decoder = kind == generation::PipelineKind::kEncoderDecoder;
  INGOT_CHECK(audio_file.empty() || encoder_decoder, ValueError,
              "[ingot generate] --audio is for speech models (Whisper); {} is not an "
              "encoder-decoder model",
              source);
  if (encoder_decoder) {
    INGOT_CHECK(image_files.empty(), ValueError,
                "[ingot generate] --image is for vision-language models; {} is an "
                "encoder-decoder model",
                source);
    INGOT_CHECK(dtype == "auto", NotSupportedError,
                "[ingot generate] --dtype is for decoder-only and vision-language models; {} is "
                "an encoder-decoder model, which runs in float32",
                source);
    return generate_encoder_decoder(source, exported, tokenizer, prompt, input_specs, audio_file,
                                    max_new_tokens, max_cache_len, json, runtime_options);
  }
  ImageTensors images;  // for a vision-language model
  Tensor& pixel_values = images.pixel_values;
  INGOT_CHECK(image_files.empty() || input_specs.empty(), ValueError,
              "[ingot generate] give either --image (with --prompt / --chat) or --input "
              "pixel_values=FILE.npy, not both");
  const bool patch_input = media::Qwen2VLImageProcessor::is_qwen2_vl(source);
  if (!image_files.empty() && patch_input) {
    // Qwen2VLProcessor's work: each image smart-resized and flattened into patches, each
    // placeholder expanded to its image's t * h * w / merge^2 tokens.
    const media::Qwen2VLImageProcessor processor =
        media::Qwen2VLImageProcessor::from_folder(source);
    std::vector<Tensor> patches, grids;
    std::vector<int64_t> tokens;
    for (const std::string& file : image_files) {
      media::Qwen2VLImageProcessor::Output out = processor.preprocess_file(file);
      const int64_t* g = out.image_grid_thw.data<int64_t>();
      tokens.push_back(g[0] * g[1] * g[2] / (processor.merge_size * processor.merge_size));
      patches.push_back(out.pixel_values);
      grids.push_back(out.image_grid_thw);
    }
    pixel_values = cat(patches, 0);
    images.image_grid_thw = cat(grids, 0);
    prompt = media::expand_image_tokens(prompt, qwen2_vl_image_token(source), tokens);
  } else if (!image_files.empty()) {
    // The processor's work: each image resized, cropped and normalised, each placeholder
    // expanded to the image's tokens (LlavaProcessor).
    const media::ClipImageProcessor processor = media::ClipImageProcessor::from_folder(source);
    const media::ImagePromptConfig images = media::ImagePromptConfig::from_folder(source);
    std::vector<Tensor> each;
    for (const std::string& file : image_files) each.push_back(processor.preprocess_file(file));
    pixel_values = cat(each, 0);
    const size_t placeholders = [&] {
      size_t n = 0;
      for (size_t at = prompt.find(images.image_token); at != std::string::npos;
           at = prompt.find(images.image_token, at + images.image_token.size()))
        ++n;
      return n;
    }();
    INGOT_CHECK(placeholders == 0 || placeholders == image_files.size(), ValueError,
                "[ingot generate] the prompt has {} image placeholders '{}' for {} --image files; "
                "give one per image",
                placeholders, images.image_token, image_files.size());
    prompt = media::expand_image_tokens(
        prompt, images.image_token,
        images.tokens_per_image(pixel_values.size(2), pixel_values.size(3)));
  }
  std::vector<int64_t> ids =
      !input_specs.empty()
          ? prompt_from_inputs(input_specs, kind == generation::PipelineKind::kVisionLanguage,
                               patch_input, images)
          : tokenizer.encode(prompt, /*add_special_tokens=*/!templated);
  INGOT_CHECK(!ids.empty(), ValueError,
              "[ingot generate] the prompt encodes to no tokens; give some text");
  // A directory's Generator reads its generation_config.json when it loads; a model
  // folder's is read here, before the in-memory export it sizes the cache of.
  std::optional<runtime::Generator> gen;
  if (exported) gen.emplace(runtime::Generator::load(source, max_cache_len, runtime_options));
  const models::GenerationConfig defaults =
      exported ? gen->generation_config() : models::GenerationConfig::from_folder(source);
  const int64_t new_tokens =
      max_new_tokens.value_or(defaults.new_token_limit(int64_t(ids.size())).value_or(64));
  INGOT_CHECK(!exported || dtype == "auto", ValueError,
              "[ingot generate] --dtype is for a model folder; '{}' was exported with its "
              "dtype (ingot export --dtype)",
              source);
  std::optional<DType> compute_dtype;
  if (!exported) {
    models::LoadOptions load;
    if (kind != generation::PipelineKind::kVisionLanguage || dtype != "auto")
      load.compute_dtype = generate_compute_dtype(source, dtype);
    compute_dtype = load.compute_dtype;
    auto model = models::from_pretrained(source, load);
    // The programs `ingot export FOLDER --task generation` writes (separate prefill and
    // decode), with the cache sized for this prompt.
    exporters::GenerationExportOptions o;
    o.multi_token_decode = false;
    o.max_cache_len =
        max_cache_len.value_or(std::max<int64_t>(int64_t(ids.size()) + new_tokens + 1, 8));
    o.model_folder = source;
    gen.emplace(exporters::NativeExporter()
                    .export_for_generation(*model, exporters::NativeExportConfig(), o)
                    .package(),
                std::nullopt, runtime_options);
    gen->set_generation_config(defaults);
  }
  if (verbose) std::fprintf(stderr, "[load-time passes]\n%s", gen->pass_report().str().c_str());
  if (gen->is_vision_language()) check_token_types(input_specs, ids, gen->image_token_id());
  if (gen->is_vision_language() && !pixel_values.defined()) {
    const auto image_tokens = std::count(ids.begin(), ids.end(), gen->image_token_id());
    INGOT_CHECK(image_tokens == 0, ValueError,
                "[ingot generate] the prompt has {} image tokens (id {}) but no image was given; "
                "pass --image FILE (or --input pixel_values=FILE.npy)",
                image_tokens, gen->image_token_id());
  }
  INGOT_CHECK(!pixel_values.defined() || gen->is_vision_language(), ValueError,
              "[ingot generate] pixel_values given, but {} is not a vision-language model", source);
  // The model's defaults, then the flags: a sampling flag samples, --greedy does not.
  runtime::GenerateOptions go = gen->default_options(int64_t(ids.size()), new_tokens);
  go.max_new_tokens = new_tokens;  // --max-new-tokens wins over the file
  if (temperature) go.sampling.temperature = *temperature;
  if (top_k) go.sampling.top_k = *top_k;
  if (top_p) go.sampling.top_p = *top_p;
  if (min_p) go.sampling.min_p = *min_p;
  if (repetition_penalty) go.sampling.repetition_penalty = *repetition_penalty;
  if (temperature || top_k || top_p || min_p) go.do_sample = true;
  if (greedy) go.do_sample = false;
  if (seed) go.seed = *seed;
  // No eos_token_id in generation_config.json or config.json: the usual end tokens.
  if (!defaults.eos_token_ids) go.stop_tokens = models::conventional_stop_tokens(tokenizer);
  if (ignore_eos) go.stop_tokens.clear();
  // Streaming, continuing the prompt's text.
  TokenStream generated(tokenizer, ids, json);
  // A plain prompt is printed with its continuation; a chat prompt (the rendered
  // template with its special tokens) is not: the answer alone (--verbose shows it).
  if (!json && !templated) std::printf("%s", prompt.c_str());
  go.on_token = generated.callback();
  runtime::GenerationStats stats;
  if (images.image_grid_thw.defined())
    gen->generate(ids, pixel_values, images.image_grid_thw, go, &stats);
  else if (pixel_values.defined())
    gen->generate(ids, pixel_values, go, &stats);
  else
    gen->generate(ids, go, &stats);
  if (json) {
    nlohmann::json out = {{"prompt_ids", ids},
                          {"generated_ids", generated.ids},
                          {"text", tokenizer.decode(generated.ids, true)},
                          {"stop_reason", stats.stop_reason},
                          {"prompt_tokens", stats.prompt_tokens},
                          {"new_tokens", stats.new_tokens},
                          {"time_to_first_token_s", stats.prefill_seconds},
                          {"prefill_tokens_per_s", stats.prefill_tokens_per_second()},
                          {"decode_tokens_per_s", stats.decode_tokens_per_second()}};
    if (compute_dtype) out["compute_dtype"] = std::string(dtype_name(*compute_dtype));
    // Replace, not throw on, bytes of a character the last token left incomplete.
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf(
      "%s\n\n[%lld prompt tokens, %lld new tokens (%s); prefill %.1f tokens/s, decode %.1f "
      "tokens/s]\n",
      generated.stream.flush().c_str(), (long long)stats.prompt_tokens, (long long)stats.new_tokens,
      stats.stop_reason.c_str(), stats.prefill_tokens_per_second(),
      stats.decode_tokens_per_second());
  return 0;
}

}  // namespace ingot::cli
