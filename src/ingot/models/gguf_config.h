// A GGUF file's metadata as the Hugging Face config.json ingot's architectures read, the
// way transformers' GGUF loader builds it (integrations/ggml.py's key mapping):
//   {arch}.block_count -> num_hidden_layers, {arch}.embedding_length -> hidden_size,
//   {arch}.feed_forward_length -> intermediate_size, {arch}.context_length ->
//   max_position_embeddings, {arch}.attention.head_count[_kv] -> num_[key_value_]heads,
//   {arch}.attention.layer_norm_rms_epsilon -> rms_norm_eps, {arch}.rope.freq_base ->
//   rope_theta, tokenizer.ggml.{bos,eos,padding,unknown}_token_id -> *_token_id,
//   tie_word_embeddings = no `output.weight` tensor.
// Architectures: llama (Mistral when general.name is "mistral", as transformers decides),
// mistral, qwen2, qwen3, phi3 (without LongRoPE factors), gemma2, gemma3 (text; the soft-caps,
// sliding window and local rope base transformers' configs default to where the metadata is
// silent; rope scaling keys are not read, as transformers does not), qwen3moe (expert_count,
// expert_used_count, expert_feed_forward_length -> moe_intermediate_size, norm_topk_prob),
// stablelm (LayerNorm eps, qkv bias and parallel residual from the tensors present, partial
// rotary from rope.dimension_count).
// Any other is a
// NotSupportedError naming it.
#pragma once

#include <string>

#include "ingot/formats/gguf.h"

namespace ingot::models {

// What the loader needs to know about a GGUF architecture beyond the config.
struct GgufArchitecture {
  std::string gguf_name;      // general.architecture ("llama")
  std::string hf_class;       // "LlamaForCausalLM"
  bool unpermute_qk = false;  // llama.cpp's converter permuted attn_q / attn_k rows
};

// The architecture of `file`; NotSupportedError naming it (and the supported ones) when
// ingot cannot load it from a GGUF.
GgufArchitecture gguf_architecture(const formats::GgufFile& file);

// The reverse direction, from the same table: the architecture llama.cpp's converter
// writes for Hugging Face class `hf_class` (gguf_name is "llama" for MistralForCausalLM;
// unpermute_qk: the q/k rows must be permuted for llama.cpp's rope). NotSupportedError
// naming it and the classes ingot writes (Llama, Mistral, Qwen2, Qwen3).
GgufArchitecture gguf_architecture_for_writing(const std::string& hf_class);

// config.json text for `file` (architectures, model_type and the hyper-parameters above).
std::string gguf_config_json(const formats::GgufFile& file);

}  // namespace ingot::models
