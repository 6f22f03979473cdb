// Pretrained models loaded from Hugging Face folders, and the AutoModel-style entry.
//
// Each architecture file (models/<family>/: decoder/llama.cpp, decoder/qwen3.cpp,
// encoder/bert.cpp, ...) registers a factory under the class name found in config.json's
// `architectures`; from_pretrained reads the config, builds the module tree and loads the
// safetensors weights into it (zero-copy when the stored dtype is the compute dtype).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ingot/models/config.h"
#include "ingot/nn/attention.h"
#include "ingot/nn/module.h"
#include "ingot/nn/static_cache.h"

namespace ingot::models {

// Named model inputs, as Hugging Face's forward arguments. Undefined tensors are absent.
struct ModelInputs {
  Tensor input_ids;  // [batch, seq] int64
  // [batch, key slots] int64 0/1: past + seq without a cache or with a KVCache,
  // max_cache_len with a StaticCache; or a 4-D bool mask (see nn::causal_mask).
  Tensor attention_mask;
  Tensor position_ids;  // [batch, seq] int64; default: the cache's positions of the new tokens
                        // (M-RoPE decoders, Qwen2-VL: also [3, batch, seq], t / h / w rows)
  // [batch, 1] int64, M-RoPE decoders: added to the default positions (transformers'
  // rope_deltas: how far the text after the images' grid positions is from its slot).
  Tensor rope_deltas;
  Tensor token_type_ids;  // [batch, seq] (BERT)
  // [batch, mel bins, frames] float: Whisper's log-mel features, as its feature extractor
  // makes them (the encoder's input; decoder_input_ids are the decoder's).
  Tensor input_features;
  // [batch, seq, hidden]: the embeddings to run instead of looking up input_ids (a
  // vision-language model's language model gets the text embeddings with the image
  // tokens' rows replaced by projected image features). Decoders only.
  Tensor inputs_embeds;
  // [images, channels, height, width] float (vision-language models), as the processor
  // makes it.
  Tensor pixel_values;
  // [batch, tokens] int64: an encoder-decoder model's decoder input (its prompt starts
  // with decoder_start_token_id); input_ids are then the encoder's.
  Tensor decoder_input_ids;
  // [images, 3] int64 (t, h, w patches per image): with Qwen2-VL's flattened-patch
  // pixel_values [patches, C * T * P * P].
  Tensor image_grid_thw;
  // Incremental decoding (decoders only): nn::KVCache (grows) or nn::StaticCache (fixed
  // size, written in place). The forward stores the new tokens' keys and values in it.
  nn::Cache* cache = nullptr;
  bool output_hidden_states = false;
  // A 4-D attention_mask is used as is by every layer (transformers' rule). With this set
  // it is the full-attention layers' mask, and sliding-window layers add their window to
  // it, measured over the key slots (the positions Cache::new_positions gives): how seed
  // 003's decode layout keeps Gemma 2 / 3's mixed layers (exporter_generation.cpp).
  bool sliding_windows_on_4d_mask = false;
};

struct ModelOutputs {
  Tensor logits;                      // causal LMs: [batch, seq, vocab]
  Tensor last_hidden_state;           // [batch, seq, hidden]
  Tensor pooler_output;               // BERT: [batch, hidden]
  std::vector<Tensor> hidden_states;  // embeddings + each layer, when requested
  // Outputs by Hugging Face name ("logits", "last_hidden_state", ...).
  std::map<std::string, Tensor> named() const;
};

struct LoadOptions {
  DType compute_dtype = DType::F32;  // f32 (default) or bf16
  // A GGUF's Q4_0 / Q8_0 linear weights stay packed (int4 / int8, group 32) and run
  // ingot's quantised kernels (models/gguf_packed_linears.h); false dequantises them to
  // float like every other block type.
  bool gguf_packed = true;
};

class PretrainedModel : public nn::Module {
 public:
  using nn::Module::Module;
  virtual ModelOutputs forward(const ModelInputs& inputs) = 0;
  // The input names forward() understands, in HF order ("input_ids", "attention_mask", ...).
  virtual std::vector<std::string> input_names() const = 0;
  // What a KV cache for this model holds per layer; nullopt for models without one (BERT).
  virtual std::optional<nn::CacheSpec> cache_spec() const { return std::nullopt; }
  // transformers' _tied_weights_keys: state-dict name -> the name it is tied to. A tied
  // name the checkpoint lacks takes its source's tensor (T5's lm_head.weight <-
  // shared.weight); a tied name the checkpoint has but the model does not own is ignored.
  virtual std::map<std::string, std::string> tied_weights() const { return {}; }
  // transformers' _keys_to_ignore_on_load_unexpected: checkpoint names no module owns.
  virtual std::vector<std::string> ignored_checkpoint_names() const { return {}; }
  const std::string& architecture() const { return architecture_; }
  DType compute_dtype() const { return compute_dtype_; }
  // The folder from_pretrained loaded it from (transformers' name_or_path); "" otherwise.
  const std::string& name_or_path() const { return name_or_path_; }

 protected:
  std::string architecture_;
  std::string name_or_path_;
  DType compute_dtype_ = DType::F32;
  friend std::shared_ptr<PretrainedModel> from_pretrained(const std::string&, const LoadOptions&);
  friend std::shared_ptr<PretrainedModel> create_model(const std::string&, const ConfigReader&,
                                                       const LoadOptions&);
};

using ModelFactory =
    std::function<std::shared_ptr<PretrainedModel>(const ConfigReader&, const LoadOptions&)>;

// Registers an architecture (static initialisation in each architecture file).
struct ArchitectureRegistrar {
  ArchitectureRegistrar(const std::string& architecture, ModelFactory factory);
};
std::vector<std::string> supported_architectures();
// The module tree of `architecture` for `config`, without weights (placeholders): what
// from_pretrained builds before loading. A multimodal model builds its language model
// with it from text_config. NotSupportedError for an unknown architecture.
std::shared_ptr<PretrainedModel> create_model(const std::string& architecture,
                                              const ConfigReader& config,
                                              const LoadOptions& options);

// Checks input_ids is [batch, seq]; the error names the architecture.
void check_input_ids(const ModelInputs& in, const std::string& architecture);
// position_ids when not given: past .. past + seq - 1 for every row -> [batch, seq].
Tensor default_position_ids(const SymInt& batch, const SymInt& seq, const SymInt& past);
// The same from the new tokens' positions [seq] (Cache::new_positions) -> [batch, seq].
Tensor default_position_ids(const Tensor& positions, const SymInt& batch);

// Builds the model named by `folder`/config.json and loads its weights. Errors name the
// folder, the architecture (listing the supported ones) or the tensor at fault.
// `folder` may also be a GGUF file, or a folder holding exactly one .gguf and no
// config.json: the config comes from its metadata (gguf_config.h) and the weights from
// its tensors (gguf_weights.h), dequantised to the compute dtype.
std::shared_ptr<PretrainedModel> from_pretrained(const std::string& folder,
                                                 const LoadOptions& options = {});

}  // namespace ingot::models
