// Encoder-decoder models (T5; Whisper plugs in the same way): a PretrainedModel whose
// generation runs an encoder once per input and then a decoder loop that attends to the
// encoder's states. export_for_generation splits it into (docs/generation.md):
//
//   encoder      encoder input [1, source...] -> encoder_hidden_states [1, source, d_model]
//   cross_kv     encoder_hidden_states -> every decoder layer's cross-attention keys and
//                values, [1, heads, source, head_dim] each (computed once per input)
//   decode       (decoder input_ids [1, tokens], the cross K/V, a StaticCache for the
//                decoder's self-attention, written in place) -> logits [1, tokens, vocab]
//
// The cross K/V are plain tensors the runtime keeps between decode steps (named
// cross_key_cache.N / cross_value_cache.N); they are inputs of decode, never written by it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ingot/models/model.h"

namespace ingot::models {

// Every decoder layer's cross-attention keys and values over the encoder states:
// keys[i], values[i] [batch, heads, source, head_dim].
struct CrossAttentionCache {
  std::vector<Tensor> keys, values;
  // "cross_key_cache.N" / "cross_value_cache.N" -> tensor (aliases).
  std::map<std::string, Tensor> named() const;
  // The inverse of named(); ValueError naming a missing layer or an unknown name.
  static CrossAttentionCache from_named(const std::map<std::string, Tensor>& tensors);
  size_t num_layers() const { return keys.size(); }
};

// What the encoder takes, for the export's example and its symbolic dims.
struct EncoderInput {
  std::string name;        // "input_ids" (T5) or "input_features" (Whisper)
  IntShape example_shape;  // a representative example, batch 1
  DType dtype = DType::I64;
  // The dims that vary between inputs (T5: {1}, the source tokens), each up to max_length.
  std::vector<int> symbolic_dims;
  int64_t max_length = 4096;
};

class EncoderDecoderModel : public PretrainedModel {
 public:
  using PretrainedModel::PretrainedModel;
  virtual EncoderInput encoder_input() const = 0;
  // get_encoder(): the encoder input -> encoder_hidden_states [1, source, d_model].
  virtual Tensor encode(const Tensor& encoder_input) = 0;
  // Each decoder layer's cross-attention k / v projections of the encoder states.
  virtual CrossAttentionCache cross_attention_cache(const Tensor& encoder_hidden_states) = 0;
  // get_decoder() + the LM head: decoder_input_ids [1, tokens] over the cross K/V and the
  // self-attention cache (which stores the new tokens) -> logits [1, tokens, vocab].
  virtual Tensor decode(const Tensor& decoder_input_ids, const CrossAttentionCache& cross,
                        nn::Cache* cache) = 0;
  // config.json's decoder_start_token_id (the decoder's first input).
  virtual int64_t decoder_start_token_id() const = 0;
  // The decoder's prompt as transformers' generate builds it from `model_folder`'s
  // generation_config.json (falling back to config.json): [decoder_start_token_id] for
  // T5; Whisper adds its forced language / task tokens by overriding this.
  virtual std::vector<int64_t> decoder_prompt(const std::string& model_folder) const;
};

}  // namespace ingot::models
