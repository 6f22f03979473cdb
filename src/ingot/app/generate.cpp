// Request preparation and generation shared by the CLI and Python (app/generate.h).
#include "ingot/app/generate.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "ingot/exporters/generation_export.h"
#include "ingot/formats/npy.h"
#include "ingot/generation/manifest.h"
#include "ingot/media/auto_processor.h"
#include "ingot/models/config.h"
#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/models/encdec/whisper_generation.h"
#include "ingot/models/generation_config.h"
#include "ingot/models/vision/vision_language.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator/generator.h"
#include "ingot/text/chat_template.h"
#include "ingot/text/decode_stream.h"
#include "ingot/text/tokenizer.h"

namespace ingot::app {

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
std::vector<int64_t> prompt_from_inputs(
    const std::vector<std::pair<std::string, std::string>>& specs, bool vision_language,
    bool patch_input, ImageTensors& images) {
  std::vector<int64_t> ids, token_types;
  bool have_ids = false;
  std::string types_file;
  for (const auto& [name, file] : specs) {
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
void check_token_types(const std::vector<std::pair<std::string, std::string>>& specs,
                       const std::vector<int64_t>& ids, int64_t image_token_id) {
  for (const auto& [name, file] : specs) {
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

// The kind of model a Hugging Face folder holds: config.json's is_encoder_decoder /
// vision_config.
generation::PipelineKind folder_kind(const std::string& folder) {
  std::ifstream f(std::filesystem::path(folder) / "config.json");
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return generation::PipelineKind::kDecoderOnly;
  if (j.value("is_encoder_decoder", false)) return generation::PipelineKind::kEncoderDecoder;
  return j.contains("vision_config") ? generation::PipelineKind::kVisionLanguage
                                     : generation::PipelineKind::kDecoderOnly;
}

// An encoder-decoder's encoder input from --input NAME=FILE.npy: `encoder_input`
// (input_ids [1, source] int64 / int32 for T5; a float tensor such as Whisper's
// input_features as stored), and an attention_mask, which must be all ones.
Tensor encoder_input_from_specs(const std::vector<std::pair<std::string, std::string>>& specs,
                                const std::string& encoder_input) {
  Tensor input;
  for (const auto& [name, file] : specs) {
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
std::string chat_prompt(const std::string& source, const GenerationRequest& r) {
  text::ChatTemplate t = text::ChatTemplate::from_folder(source);
  if (!r.messages_json.empty()) {
    return t.render_values(
        text::ChatTemplate::messages_from_json(r.messages_json, r.messages_source), true);
  }
  std::vector<text::ChatMessage> messages;
  if (!r.system.empty()) messages.push_back({"system", r.system});
  messages.push_back({"user", r.chat});
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

// A model folder's generation components exported in memory with `o` and run by a
// Generator with the folder's generation_config.json defaults.
runtime::Generator export_in_memory(models::PretrainedModel& model, const std::string& folder,
                                    exporters::GenerationExportOptions o,
                                    const models::GenerationConfig& defaults,
                                    const runtime::RuntimeOptions& runtime_options) {
  o.model_folder = folder;
  runtime::Generator gen(exporters::NativeExporter()
                             .export_for_generation(model, exporters::NativeExportConfig(), o)
                             .package(),
                         std::nullopt, runtime_options);
  gen.set_generation_config(defaults);
  return gen;
}

// The generated ids, collected by the Generator's on_token callback; each token's text
// goes to `on_text` as soon as it is complete (DecodeStream holds back a character split
// over tokens), continuing the text of `context`.
struct TokenStream {
  TokenStream(const text::Tokenizer& tokenizer, const std::vector<int64_t>& context,
              std::function<void(const std::string&)> on_text)
      : stream(tokenizer, /*skip_special_tokens=*/true, context), on_text(std::move(on_text)) {}
  std::function<void(int64_t)> callback() {
    return [this](int64_t token) {
      ids.push_back(token);
      if (on_text) on_text(stream.step(token));
    };
  }
  // What the stream still holds back, to the callback.
  void finish() {
    if (on_text) on_text(stream.flush());
  }
  std::vector<int64_t> ids;
  text::DecodeStream stream;
  std::function<void(const std::string&)> on_text;
};

// `ingot generate` for an encoder-decoder model: the prompt (tokenized with its special
// tokens, T5's </s>) or --input is the encoder's input; the decoder starts from the
// decoder prompt (decoder_start_token_id) and decodes greedily (the model's eos tokens
// stop it). The text printed is the decoder's output alone.
GenerationResult generate_encoder_decoder(const std::string& source, bool exported,
                                          const text::Tokenizer& tokenizer,
                                          const GenerationRequest& r,
                                          const GenerationCallbacks& callbacks) {
  const std::string& prompt = r.prompt;
  const auto& input_specs = r.inputs;
  const std::string& audio_file = r.audio;
  const std::optional<int64_t> max_new_tokens = r.max_new_tokens, max_cache_len = r.max_cache_len;
  const runtime::RuntimeOptions& runtime_options = r.runtime;
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
    // Whisper: the audio file through the folder's feature extractor.
    INGOT_CHECK(encoder_input == "input_features", ValueError,
                "[ingot generate] --audio is for speech models whose encoder takes "
                "input_features; this model's takes '{}'",
                encoder_input);
    INGOT_CHECK(
        input_specs.empty(), ValueError,
        "[ingot generate] give either --audio or --input input_features=FILE.npy, not both");
    input = media::AutoProcessor::from_folder(source)->audio(audio_file);
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
    gen.emplace(export_in_memory(*model, source, o, defaults, runtime_options));
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
  TokenStream generated(tokenizer, decoder_prompt, callbacks.on_text);
  go.on_token = generated.callback();
  GenerationResult result;
  result.encoder_decoder = true;
  gen->generate_from_encoder_input(input, go, &result.stats);
  generated.finish();
  result.prompt_ids = ids;
  result.decoder_prompt_ids = gen->last_decoder_prompt();  // Whisper: with the detected language
  result.generated_ids = generated.ids;
  result.text = tokenizer.decode(generated.ids, true);
  return result;
}
}  // namespace

void SamplingFlags::apply(runtime::GenerateOptions& o) const {
  if (temperature) o.sampling.temperature = *temperature;
  if (top_k) o.sampling.top_k = *top_k;
  if (top_p) o.sampling.top_p = *top_p;
  if (min_p) o.sampling.min_p = *min_p;
  if (repetition_penalty) o.sampling.repetition_penalty = *repetition_penalty;
  if (temperature || top_k || top_p || min_p) o.do_sample = true;
  if (do_sample) o.do_sample = *do_sample;
  if (seed) o.seed = *seed;
}

nlohmann::json GenerationResult::to_json() const {
  if (encoder_decoder) {
    return {{"prompt_ids", prompt_ids},
            {"decoder_prompt_ids", decoder_prompt_ids},
            {"generated_ids", generated_ids},
            {"text", text},
            {"stop_reason", stats.stop_reason},
            {"new_tokens", stats.new_tokens},
            {"time_to_first_token_s", stats.prefill_seconds},
            {"decode_tokens_per_s", stats.decode_tokens_per_second()}};
  }
  nlohmann::json out = {{"prompt_ids", prompt_ids},
                        {"generated_ids", generated_ids},
                        {"text", text},
                        {"stop_reason", stats.stop_reason},
                        {"prompt_tokens", stats.prompt_tokens},
                        {"new_tokens", stats.new_tokens},
                        {"time_to_first_token_s", stats.prefill_seconds},
                        {"prefill_tokens_per_s", stats.prefill_tokens_per_second()},
                        {"decode_tokens_per_s", stats.decode_tokens_per_second()}};
  if (compute_dtype) out["compute_dtype"] = std::string(dtype_name(*compute_dtype));
  return out;
}

std::string GenerationResult::summary() const {
  if (encoder_decoder) {
    return fmt::format("[{} encoder tokens, {} new tokens ({}); decode {:.1f} tokens/s]",
                       prompt_ids.size(), stats.new_tokens, stats.stop_reason,
                       stats.decode_tokens_per_second());
  }
  return fmt::format(
      "[{} prompt tokens, {} new tokens ({}); prefill {:.1f} tokens/s, decode {:.1f} tokens/s]",
      stats.prompt_tokens, stats.new_tokens, stats.stop_reason, stats.prefill_tokens_per_second(),
      stats.decode_tokens_per_second());
}

GenerationResult generate(const std::string& source, const GenerationRequest& r,
                          const GenerationCallbacks& callbacks) {
  std::string prompt = r.prompt;
  const auto& input_specs = r.inputs;
  const std::vector<std::string>& image_files = r.images;
  const std::string& audio_file = r.audio;
  const std::optional<int64_t> max_new_tokens = r.max_new_tokens, max_cache_len = r.max_cache_len;
  const std::string& dtype = r.dtype;
  const runtime::RuntimeOptions& runtime_options = r.runtime;
  INGOT_CHECK(!prompt.empty() || r.templated() || !input_specs.empty() || !audio_file.empty(),
              ValueError,
              "[ingot generate] give --prompt TEXT, --chat MESSAGE, --messages FILE.json, --audio "
              "FILE.wav or --input "
              "input_ids=FILE.npy (see 'ingot generate --help')");

  INGOT_CHECK(!max_new_tokens || *max_new_tokens >= 1, ValueError,
              "[ingot generate] --max-new-tokens must be at least 1 (got {})", *max_new_tokens);
  INGOT_CHECK(!max_cache_len || *max_cache_len >= 8, ValueError,
              "[ingot generate] --max-cache-len must be at least 8 (got {})", *max_cache_len);
  const bool exported = generation::is_generation_directory(source);
  // A generation directory's manifest first: another runtime's components, or a manifest
  // of another version, are refused before the tokenizer and template are read.
  generation::PipelineKind kind = generation::PipelineKind::kDecoderOnly;
  if (exported) {
    const generation::GenerationManifest manifest = generation::GenerationManifest::read(source);
    INGOT_CHECK(manifest.export_format == "native", NotSupportedError,
                "[ingot generate] '{}' holds {} components, which ingot's runtime does not run; "
                "export with --format native (or run them with their own runtime)",
                source, manifest.export_format);
    kind = manifest.kind();
  } else {
    kind = folder_kind(source);
  }
  text::Tokenizer tokenizer = text::Tokenizer::from_folder(source);
  const bool templated = r.templated();
  if (templated) prompt = chat_prompt(source, r);
  if (templated && callbacks.on_info) callbacks.on_info("[prompt]\n" + prompt + "\n[/prompt]\n");
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
    GenerationRequest encoder_request = r;
    encoder_request.prompt = prompt;
    return generate_encoder_decoder(source, exported, tokenizer, encoder_request, callbacks);
  }
  ImageTensors images;  // for a vision-language model
  Tensor& pixel_values = images.pixel_values;
  INGOT_CHECK(image_files.empty() || input_specs.empty(), ValueError,
              "[ingot generate] give either --image (with --prompt / --chat) or --input "
              "pixel_values=FILE.npy, not both");
  const bool vision_language = kind == generation::PipelineKind::kVisionLanguage;
  INGOT_CHECK(image_files.empty() || vision_language, ValueError,
              "[ingot generate] --image is for vision-language models; {} is not one", source);
  // The folder's processor (AutoProcessor): it makes --image's inputs and expands the
  // prompt's placeholders; with --input it says whether the model takes image_grid_thw.
  std::unique_ptr<media::Processor> processor;
  if (!image_files.empty() || (vision_language && media::AutoProcessor::has_config(source)))
    processor = media::AutoProcessor::from_folder(source);
  const bool patch_input = processor && processor->patch_input();
  if (!image_files.empty()) {
    media::ProcessedImages processed = processor->images(image_files, prompt);
    pixel_values = processed.pixel_values;
    images.image_grid_thw = processed.image_grid_thw;
    prompt = processed.prompt;
  }
  std::vector<int64_t> ids =
      !input_specs.empty() ? prompt_from_inputs(input_specs, vision_language, patch_input, images)
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
    if (!vision_language || dtype != "auto")
      load.compute_dtype = generate_compute_dtype(source, dtype);
    compute_dtype = load.compute_dtype;
    auto model = models::from_pretrained(source, load);
    // The programs `ingot export FOLDER --task generation` writes (separate prefill and
    // decode), with the cache sized for this prompt.
    exporters::GenerationExportOptions o;
    o.multi_token_decode = false;
    o.max_cache_len =
        max_cache_len.value_or(std::max<int64_t>(int64_t(ids.size()) + new_tokens + 1, 8));
    gen.emplace(export_in_memory(*model, source, o, defaults, runtime_options));
  }
  if (callbacks.on_info) callbacks.on_info("[load-time passes]\n" + gen->pass_report().str());
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
  r.sampling.apply(go);
  // No eos_token_id in generation_config.json or config.json: the usual end tokens.
  if (!defaults.eos_token_ids) go.stop_tokens = models::conventional_stop_tokens(tokenizer);
  if (r.ignore_eos) go.stop_tokens.clear();
  // Streaming, continuing the prompt's text. A plain prompt is echoed before its
  // continuation; a chat prompt (the rendered template with its special tokens) is not.
  TokenStream generated(tokenizer, ids, callbacks.on_text);
  if (!templated && callbacks.on_prompt) callbacks.on_prompt(prompt);
  go.on_token = generated.callback();
  GenerationResult result;
  if (images.image_grid_thw.defined())
    gen->generate(ids, pixel_values, images.image_grid_thw, go, &result.stats);
  else if (pixel_values.defined())
    gen->generate(ids, pixel_values, go, &result.stats);
  else
    gen->generate(ids, go, &result.stats);
  generated.finish();
  result.prompt_ids = ids;
  result.generated_ids = generated.ids;
  result.text = tokenizer.decode(generated.ids, true);
  result.compute_dtype = compute_dtype;
  return result;
}

}  // namespace ingot::app
