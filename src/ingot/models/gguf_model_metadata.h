// A Hugging Face folder's config.json as GGUF metadata, the inverse of gguf_config.h's
// mapping (which reads what this writes back to an equal config), for the architectures
// gguf_architecture_for_writing names:
//   general.architecture, general.name (the folder's name), general.alignment (32),
//   {a}.block_count, context_length, embedding_length, feed_forward_length, vocab_size,
//   attention.head_count, head_count_kv, key_length / value_length and
//   rope.dimension_count (head_dim), rope.freq_base, attention.layer_norm_rms_epsilon;
//   rope scaling: linear and yarn as {a}.rope.scaling.{type,factor,
//   original_context_length}, llama3 as the rope_freqs.weight factors llama.cpp divides
//   its frequencies by; tokenizer ids are the tokenizer writer's.
// What llama.cpp's graph for the architecture cannot express is a NotSupportedError
// naming the config key: dynamic / longrope rope scaling, sliding-window layers.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ingot/formats/gguf.h"
#include "ingot/models/gguf_config.h"

namespace ingot::models {

struct GgufModelMetadata {
  GgufArchitecture arch;    // gguf_name is what general.architecture says
  int64_t n_head = 0;       // for the rope permutation of attn_q
  int64_t n_kv_head = 0;    // ... and attn_k
  bool tied = false;        // tie_word_embeddings
  std::vector<std::pair<std::string, formats::GgufValue>> metadata;  // general.*, {a}.*
  std::vector<float> rope_freqs;  // llama3 rope: [head_dim / 2] factors; empty otherwise
};

// Reads `folder`/config.json. Errors name the folder and the key at fault.
GgufModelMetadata gguf_model_metadata(const std::string& folder);

}  // namespace ingot::models
