// The tokenizer a GGUF's `tokenizer.ggml.*` metadata describes, as the tokenizer.json and
// tokenizer_config.json transformers' GGUF conversion builds (transformers 5.23,
// integrations/gguf/gguf_tokenizer_mapping.py), so text::Tokenizer loads it unchanged:
//
//   tokenizer.ggml.model "gpt2"   byte-level BPE: tokens (respelled in GPT-2's byte
//                                 alphabet where needed), merges, ByteLevel pre-tokenizer
//                                 (or Split(regex) + ByteLevel for the `tokenizer.ggml.pre`
//                                 names transformers knows: llama3, qwen2, tekken, gpt-4o,
//                                 ...) and decoder
//   tokenizer.ggml.model "llama"  SentencePiece-style BPE with byte fallback: tokens,
//                                 merges from the file or derived from the scores,
//                                 Metaspace(prepend "first"), Replace/ByteFallback/Fuse/Strip
//                                 decoder; for a phi3 file a Prepend + Replace normalizer in
//                                 place of Metaspace (transformers' phi3_tokenizer)
//   gemma / gemma2 / gemma3 files  transformers' GemmaTokenizer: tokens of spaces respelled
//                                 as "▁"s, merges from the file's token order, a Replace(" ",
//                                 "▁") normalizer and Split(" ", merged with previous)
// Added tokens: the tokenizer class's own specials (<|endoftext|>; <s> </s> <unk>; <bos>
// <eos> <unk> <pad> <mask>, appended after the vocabulary when absent, as transformers
// does), control tokens (token type 3) and the bos/eos/unk/pad tokens are special;
// user-defined tokens (type 4) are plain added tokens. add_bos_token / add_eos_token
// (default true / false for "llama", false / false for "gpt2") become the post-processor.
// Other tokenizer models (t5, gemma4, rwkv, ...) are a NotSupportedError naming them.
#pragma once

#include <optional>
#include <string>

#include "ingot/formats/gguf.h"

namespace ingot::models {

// tokenizer.json text for `file`; IoError naming the key when the metadata is malformed.
std::string gguf_tokenizer_json(const formats::GgufFile& file);

// The reverse direction (writing a GGUF), over the same table: the `tokenizer.ggml.pre`
// name whose Split regex is `regex` (llama-bpe, qwen2, qwen35, tekken, gpt-4o); nullopt
// for a regex the table lacks.
std::optional<std::string> gguf_pre_for_split(const std::string& regex);

// tokenizer_config.json text: bos/eos/unk/pad tokens, add_bos_token, add_eos_token and
// `tokenizer.chat_template` as chat_template when present.
std::string gguf_tokenizer_config_json(const formats::GgufFile& file);

}  // namespace ingot::models
