// A Hugging Face folder's tokenizer (tokenizer.json, tokenizer_config.json,
// chat_template.jinja) as GGUF `tokenizer.*` metadata, the inverse of gguf_tokenizer.h
// (whose tokenizer of the written metadata encodes as the folder's does):
//
//   byte-level BPE (a ByteLevel pre-tokenizer)      tokenizer.ggml.model "gpt2", merges,
//                                                   tokenizer.ggml.pre from the
//                                                   pre-tokenizer: ByteLevel alone "gpt-2",
//                                                   Digits(individual) + ByteLevel "smollm",
//                                                   Split(regex) + ByteLevel the name of
//                                                   that regex (llama-bpe, qwen2, ...)
//   SentencePiece-style BPE (byte_fallback)         "llama": tokens, scores (minus the rank
//                                                   of the merge that makes each token), merges
//
// token_type: 1 normal, 3 control (special added tokens), 4 user-defined (other added
// tokens), 6 byte (<0xNN> of a byte-fallback vocabulary), 5 unused ([PADn] filling the
// vocabulary up to the model's vocab_size, as llama.cpp's converter pads). bos / eos /
// unk / pad ids from tokenizer_config.json's tokens (else config.json's ids),
// add_bos_token / add_eos_token from tokenizer_config.json (else the post-processor's
// template), tokenizer.chat_template from tokenizer_config.json or chat_template.jinja.
// Anything else (WordPiece, Unigram, a pre-tokenizer or normalizer llama.cpp does not
// run) is a NotSupportedError naming the folder and what it holds.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ingot/formats/gguf.h"

namespace ingot::models {

// The tokenizer.* metadata of `folder`, its vocabulary padded to `vocab_size` tokens
// (the embedding's rows); fewer rows than tokens is a ValueError.
std::vector<std::pair<std::string, formats::GgufValue>> gguf_tokenizer_metadata(
    const std::string& folder, int64_t vocab_size);

}  // namespace ingot::models
