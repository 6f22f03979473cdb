// WhisperForConditionalGeneration (transformers' modeling_whisper.py): an audio encoder
// over log-mel input_features and a text decoder with self-attention (cached) and
// cross-attention over the encoder states. Checkpoint names (save_pretrained's):
//
//   model.encoder.{conv1, conv2}.{weight, bias}     Conv1d(mels -> d, k 3, pad 1) and
//                                                   Conv1d(d -> d, k 3, stride 2, pad 1)
//   model.encoder.embed_positions.weight            [max_source_positions, d] (sinusoids)
//   model.encoder.layers.N.{self_attn.{k,v,q,out}_proj, self_attn_layer_norm, fc1, fc2,
//                           final_layer_norm}, model.encoder.layer_norm
//   model.decoder.embed_tokens.weight               [vocab, d] (also the LM head: proj_out
//                                                   is tied to it and not stored)
//   model.decoder.embed_positions.weight            [max_target_positions, d] (learned)
//   model.decoder.layers.N.{self_attn.*, self_attn_layer_norm, encoder_attn.*,
//                           encoder_attn_layer_norm, fc1, fc2, final_layer_norm},
//   model.decoder.layer_norm
//
// k_proj has no bias; q, v and out do. Queries are scaled by head_dim^-0.5 before the
// product, as transformers does. Every block is pre-norm (LayerNorm, eps 1e-5).
//
//   input_features [b, mels, 2 * max_source_positions]
//   -> gelu(conv1) -> gelu(conv2) -> [b, max_source_positions, d] + embed_positions
//   -> encoder layers -> layer_norm = encoder_hidden_states [b, source, d]
//   cross K/V per decoder layer: k_proj / v_proj of encoder_hidden_states, once per input
//   decoder_input_ids [b, t] -> embed_tokens (* sqrt(d) with scale_embedding)
//   + embed_positions[cache positions] -> decoder layers -> layer_norm -> logits (tied)
#pragma once

#include <memory>
#include <vector>

#include "ingot/models/encdec/encoder_decoder.h"
#include "ingot/nn/layers.h"

namespace ingot::models {

struct WhisperConfig {
  int64_t vocab_size = 0, d_model = 0, num_mel_bins = 80;
  int64_t encoder_layers = 0, encoder_heads = 0, encoder_ffn_dim = 0;
  int64_t decoder_layers = 0, decoder_heads = 0, decoder_ffn_dim = 0;
  int64_t max_source_positions = 1500, max_target_positions = 448;
  std::string activation = "gelu";
  bool scale_embedding = false;
  int64_t decoder_start_token_id = 50258;
  static WhisperConfig from_config(const ConfigReader& c);
  // Frames of input_features the encoder takes: 2 * max_source_positions (conv2 halves).
  int64_t input_frames() const { return 2 * max_source_positions; }
};

class WhisperEncoder;
class WhisperDecoder;

class WhisperForConditionalGeneration : public EncoderDecoderModel {
 public:
  WhisperForConditionalGeneration(const ConfigReader& c, const LoadOptions& o);
  // input_features and decoder_input_ids -> logits [b, t, vocab] and the decoder's
  // last_hidden_state; with a cache, the decoder stores its self-attention K/V there.
  ModelOutputs forward(const ModelInputs& inputs) override;
  std::vector<std::string> input_names() const override {
    return {"input_features", "decoder_input_ids"};
  }
  // The decoder's self-attention cache.
  std::optional<nn::CacheSpec> cache_spec() const override;

  // proj_out.weight is tied to the token embedding (transformers' _tied_weights_keys).
  std::map<std::string, std::string> tied_weights() const override {
    return {{"proj_out.weight", "model.decoder.embed_tokens.weight"}};
  }
  // input_features [1, mels, frames] float, all static (the feature extractor pads).
  EncoderInput encoder_input() const override;
  // The encoder: input_features [b, mels, frames] -> encoder_hidden_states [b, source, d].
  // ShapeError naming input_features when mels or frames differ from the config's.
  Tensor encode(const Tensor& input_features) override;
  // Each decoder layer's encoder_attn k_proj / v_proj of the states, once per input:
  // [b, heads, source, head_dim] each.
  CrossAttentionCache cross_attention_cache(const Tensor& encoder_hidden_states) override;
  // decoder_input_ids [b, t] over the cross K/V (and the self-attention cache, when
  // given) -> the final-normed decoder state [b, t, d].
  Tensor decoder_hidden(const Tensor& decoder_input_ids, const CrossAttentionCache& cross,
                        nn::Cache* cache) const;
  Tensor lm_head(const Tensor& hidden) const;  // [.., d] -> [.., vocab], tied to embed_tokens
  Tensor decode(const Tensor& decoder_input_ids, const CrossAttentionCache& cross,
                nn::Cache* cache) override {
    return lm_head(decoder_hidden(decoder_input_ids, cross, cache));
  }
  const WhisperConfig& config() const { return c_; }
  int64_t decoder_start_token_id() const override { return c_.decoder_start_token_id; }
  // transformers' Whisper prompt from generation_config.json (models/encdec/whisper_generation.h):
  // start, language, task, no-timestamps. A multilingual model without a language needs
  // it detected from the audio: then only [decoder_start_token_id], and the Generator's
  // prompt builder (WhisperGenerationConfig::decoder_prompt) completes it per input.
  std::vector<int64_t> decoder_prompt(const std::string& model_folder) const override;

 private:
  WhisperConfig c_;
  std::shared_ptr<WhisperEncoder> encoder_;
  std::shared_ptr<WhisperDecoder> decoder_;
};

}  // namespace ingot::models
