// Generator: the native decode loop over exported generation components
// (export_for_generation). The KV cache is allocated once; the prompt is prefilled in
// one call; each decode step writes its token into a reused [1, 1] input and the program
// writes the cache in place, so a step allocates nothing proportional to the cache.
//
// generator.cpp: construction from a GenerationPackage (inputs bound by the manifest's
// roles, the load-time passes), the cache and the decode loop; vision_language.cpp and
// encoder_decoder.cpp: the two pipelines a manifest may add before that loop.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/generation/manifest.h"
#include "ingot/generation/sampling.h"
#include "ingot/ir/program.h"
#include "ingot/models/generation_config.h"
#include "ingot/runtime/executor/program_module.h"
#include "ingot/runtime/passes/pipeline.h"

namespace ingot::runtime {

struct GenerateOptions {
  int64_t max_new_tokens = 32;
  // Greedy unless do_sample: then temperature / top-k / top-p / min-p filtering and a
  // draw from a generator seeded with `seed` (the same seed gives the same tokens).
  // sampling.repetition_penalty applies to greedy decoding too (transformers' order:
  // generation::process).
  bool do_sample = false;
  generation::SamplingParams sampling;
  uint64_t seed = 0;
  std::vector<int64_t> stop_tokens;
  // Ids whose logits become -inf at every step (transformers' SuppressTokensLogitsProcessor,
  // Whisper's suppress_tokens) and at the first new token only (SuppressTokensAtBegin,
  // begin_suppress_tokens). Ids outside the vocabulary are ignored.
  std::vector<int64_t> suppress_tokens, begin_suppress_tokens;
  // Called with each new token as soon as it is chosen (streaming).
  std::function<void(int64_t token)> on_token;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t new_tokens = 0;
  double prefill_seconds = 0, decode_seconds = 0;
  std::string stop_reason;  // "max_new_tokens", "stop_token", "cache_full"
  double prefill_tokens_per_second() const {
    return prompt_tokens / std::max(prefill_seconds, 1e-12);
  }
  // Decode steps are the new tokens after the first (which the prefill produces).
  double decode_tokens_per_second() const {
    return double(std::max<int64_t>(new_tokens - 1, 0)) / std::max(decode_seconds, 1e-12);
  }
};

// What a Generator runs: native generation components and the manifest that says what
// each input of each component is and how the components connect (a vision-language or
// encoder-decoder pipeline). exporters::GenerationExport::package() makes one in memory;
// Generator::load reads one from a generation directory.
struct GenerationPackage {
  generation::GenerationManifest manifest;
  std::map<std::string, ExportedProgram> programs;  // by component name

  // Map-like access to the programs.
  ExportedProgram& at(const std::string& component) { return programs.at(component); }
  const ExportedProgram& at(const std::string& component) const { return programs.at(component); }
  bool contains(const std::string& component) const { return programs.contains(component); }
  size_t size() const { return programs.size(); }
  auto begin() { return programs.begin(); }
  auto end() { return programs.end(); }
  auto begin() const { return programs.begin(); }
  auto end() const { return programs.end(); }
};

class Generator {
 public:
  // The one way to build a Generator: "decode" (and "prefill" when exported separately),
  // plus the pipeline's components. Each component's inputs are bound by the roles of
  // its manifest layout. `max_cache_len` chooses the cache length of a program exported
  // with a dynamic one. ValueError naming the component or input that does not fit.
  // `options` say which load-time passes rewrite the components (runtime/passes/).
  explicit Generator(GenerationPackage package, std::optional<int64_t> max_cache_len = std::nullopt,
                     const RuntimeOptions& options = {});
  // Loads DIR's manifest (generation/manifest.h), its components and DIR's
  // generation_config.json (the model's defaults, see default_options). IoError naming
  // the file when one is malformed; NotSupportedError for another runtime's components,
  // before any component is read.
  static Generator load(const std::string& dir, std::optional<int64_t> max_cache_len = std::nullopt,
                        const RuntimeOptions& options = {});
  // What the load-time passes did to each component.
  const PassReport& pass_report() const { return pass_report_; }
  const generation::GenerationManifest& manifest() const { return manifest_; }

  // The model's generation defaults (generation_config.json of a loaded directory; empty
  // for components given in memory unless set_generation_config was called).
  const models::GenerationConfig& generation_config() const { return generation_config_; }
  void set_generation_config(models::GenerationConfig c) { generation_config_ = std::move(c); }
  // GenerateOptions from those defaults for a prompt of `prompt_tokens`: eos ids as stop
  // tokens, do_sample and the sampling parameters, max_new_tokens from max_new_tokens or
  // max_length (else `fallback_max_new_tokens`). Callers override fields afterwards.
  GenerateOptions default_options(int64_t prompt_tokens,
                                  int64_t fallback_max_new_tokens = 32) const;

  // Decoding of up to max_new_tokens after `prompt` (batch 1), greedy or sampled. Stops at a stop
  // token or when the cache is full (never writes past it). Empty prompt, or a prompt
  // that does not fit the cache: ValueError.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, const GenerateOptions& options,
                                GenerationStats* stats = nullptr);

  // Vision-language components (docs/generation.md; the manifest's pipeline):
  // image_encoder [+ multi_modal_projector], language_model and lm_head beside decode; the
  // image token marks the prompt positions the image embeddings replace.
  bool is_vision_language() const { return embed_tokens_.defined(); }
  int64_t image_token_id() const { return image_token_id_; }
  // The same decoding after a prompt with images: the image encoder runs once over
  // `pixel_values` [images, C, H, W], the projected features replace the prompt's image
  // tokens' embeddings, the language model prefills the cache over them and lm_head
  // gives the first token; then the decode loop. ValueError when this is not a
  // vision-language generator or the image tokens and images do not match.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, const Tensor& pixel_values,
                                const GenerateOptions& options, GenerationStats* stats = nullptr);
  // The same for a patch-input model (Qwen2-VL): pixel_values [patches, C*T*P*P] and
  // image_grid_thw [images, 3] as its processor makes them. The image encoder's side inputs
  // and the M-RoPE positions come from image_grid_thw (models::qwen2_vl_vision_inputs,
  // models::mrope_position_ids); the decode steps' positions are shifted by the prompt's
  // rope delta. ShapeError / ValueError naming pixel_values or image_grid_thw when they
  // do not fit each other or the prompt's image tokens.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, const Tensor& pixel_values,
                                const Tensor& image_grid_thw, const GenerateOptions& options,
                                GenerationStats* stats = nullptr);
  // Set for a patch-input model: its merge size (0 otherwise).
  int64_t spatial_merge_size() const { return spatial_merge_size_; }

  // Encoder-decoder components (docs/generation.md; the manifest's pipeline): encoder and
  // cross_kv beside a decode that takes the cross-attention K/V before its StaticCache.
  // encoder_input_name() is the encoder's input (input_ids, input_features);
  // decoder_prompt() what the decoder starts from (decoder_start_token_id, Whisper's forced
  // tokens).
  bool is_encoder_decoder() const { return encoder_ != nullptr; }
  const std::string& encoder_input_name() const { return encoder_input_; }
  const std::vector<int64_t>& decoder_prompt() const { return decoder_prompt_; }
  // A decoder prompt that depends on the input (Whisper's language detection): when set,
  // generate_from_encoder_input calls it after the encoder with `first_logits`, which runs
  // decode on [decoder_prompt()[0]] (the start token) and returns its logits [vocab]; its
  // result replaces decoder_prompt() for that input (last_decoder_prompt() reports it).
  using DecoderPromptBuilder =
      std::function<std::vector<int64_t>(const std::function<Tensor()>& first_logits)>;
  void set_decoder_prompt_builder(DecoderPromptBuilder builder) {
    prompt_builder_ = std::move(builder);
  }
  const std::vector<int64_t>& last_decoder_prompt() const { return last_prompt_; }
  // Encoder-decoder decoding: the encoder runs once over `encoder_input` (input_ids
  // [1, source] for T5), cross_kv projects its states once, then the decode loop from the
  // decoder prompt reuses them every step; the returned tokens follow the decoder prompt.
  // ValueError when this is not an encoder-decoder generator or the input is missing.
  std::vector<int64_t> generate_from_encoder_input(const Tensor& encoder_input,
                                                   const GenerateOptions& options,
                                                   GenerationStats* stats = nullptr);
  // Replaces the decoder prompt (ValueError when empty or not an encoder-decoder).
  void set_decoder_prompt(std::vector<int64_t> decoder_prompt);

  int64_t max_cache_len() const { return max_cache_len_; }
  // Decode calls that only ran a cached execution plan (runtime/executor/execution_plan.h).
  int64_t decode_planned_runs() const { return decode_->num_planned_runs(); }
  // The cache tensors (for tests: their storage never changes).
  const std::vector<Tensor>& cache_tensors() const { return cache_; }

 private:
  // The inputs of a component with layout `layout`: `first` (input_ids or inputs_embeds),
  // `positions` (M-RoPE position_ids, may be undefined), then the bound state by role.
  std::vector<Tensor> step_inputs(const generation::StepLayout& layout, const Tensor& first,
                                  const Tensor& positions = Tensor()) const;
  Tensor run(ProgramModule& module, const Tensor& ids);
  void allocate_cache(const ExportedProgram& decode, std::optional<int64_t> max_cache_len);
  // `decode`: the decode program as exported (it holds the text embedding table).
  void set_vision_language(const generation::VisionLanguagePipeline& pipeline,
                           const ExportedProgram& decode);
  void set_encoder_decoder(const generation::EncoderDecoderPipeline& pipeline);
  void reset_cache();
  // The decode loop after `prefill` (the prompt ids [1, n] -> logits, filling the cache).
  std::vector<int64_t> generate_after(const std::vector<int64_t>& prompt,
                                      const std::function<Tensor(const Tensor&)>& prefill,
                                      const GenerateOptions& options, GenerationStats* stats);
  Tensor prefill_with_images(const Tensor& ids, const Tensor& pixel_values,
                             const Tensor& image_grid_thw);
  // Image embeddings of a patch-input model [1, tokens, hidden].
  Tensor encode_patches(const Tensor& pixel_values, const Tensor& image_grid_thw);

  std::unique_ptr<ProgramModule> decode_, prefill_;
  // Vision-language components (null otherwise) and the text embedding table.
  std::unique_ptr<ProgramModule> image_encoder_, projector_, language_model_, lm_head_;
  Tensor embed_tokens_;             // [vocab, hidden]
  DType embed_dtype_ = DType::F32;  // the exported table's dtype (of the merged embeddings)
  int64_t image_token_id_ = -1;
  // Encoder-decoder components (null otherwise), the decode program's cross-attention
  // inputs by name and the current input's tensors for them.
  std::unique_ptr<ProgramModule> encoder_, cross_kv_;
  std::vector<std::string> cross_kv_outputs_;
  std::map<std::string, Tensor> cross_;
  std::string encoder_input_;
  std::vector<int64_t> decoder_prompt_;
  DecoderPromptBuilder prompt_builder_;
  std::vector<int64_t> last_prompt_;
  generation::GenerationManifest manifest_;
  generation::StepLayout decode_layout_, prefill_layout_, language_model_layout_;
  std::vector<Tensor> cache_;                    // the cache tensors, in decode's input order
  std::map<std::string, Tensor> cache_by_name_;  // the same tensors by input name
  // M-RoPE models: decode's rope_deltas input [1, 1] (before the cache), set per prompt.
  Tensor rope_deltas_;
  int64_t spatial_merge_size_ = 0;
  bool mrope_ = false;
  Tensor position_;          // the cache_position tensor (one of cache_)
  size_t cross_inputs_ = 0;  // decode's cross-attention inputs
  Tensor step_ids_;          // [1, 1] int64, rewritten every decode step
  int64_t max_cache_len_ = 0;
  models::GenerationConfig generation_config_;
  PassReport pass_report_;
};

// Index of the largest value of the last row of logits [1, tokens, vocab].
int64_t argmax_last(const Tensor& logits);
// The last row of logits [1, tokens, vocab] as float32, into `row` (resized once).
void last_row(const Tensor& logits, std::vector<float>& row);

}  // namespace ingot::runtime
