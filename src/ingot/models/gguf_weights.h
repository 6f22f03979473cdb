// A GGUF file's tensors under Hugging Face names, in PyTorch layout.
//
// Names (llama.cpp's -> transformers'), for the llama-like architectures:
//   token_embd.weight          model.embed_tokens.weight
//   output_norm.weight         model.norm.weight
//   output.weight              lm_head.weight
//   blk.N.attn_norm            model.layers.N.input_layernorm
//   blk.N.ffn_norm             model.layers.N.post_attention_layernorm
//   blk.N.attn_q / _k / _v     model.layers.N.self_attn.q_proj / k_proj / v_proj
//   blk.N.attn_output          model.layers.N.self_attn.o_proj
//   blk.N.attn_q_norm / _k_norm  model.layers.N.self_attn.q_norm / k_norm
//   blk.N.ffn_gate / _up / _down model.layers.N.mlp.gate_proj / up_proj / down_proj
// (each with .weight or .bias); phi3: blk.N.attn_qkv -> self_attn.qkv_proj and blk.N.ffn_up
// -> mlp.gate_up_proj (both fused, as transformers' Phi-3 holds them); gemma2 / gemma3:
// blk.N.post_attention_norm -> post_attention_layernorm, ffn_norm ->
// pre_feedforward_layernorm, post_ffw_norm -> post_feedforward_layernorm, and every
// `*norm.weight` minus 1 (llama.cpp stores Gemma's 1 + w); mixture of experts:
// blk.N.ffn_gate_inp -> mlp.gate, blk.N.ffn_{gate,up,down}_exps [E, out, in] ->
// mlp.experts.E.{gate,up,down}_proj. rope_freqs.weight (llama 3
// rope factors, recomputed from the config) is skipped. A tensor with no mapping is an IoError
// naming it.
//
// Where llama.cpp's converter permuted the rows of attn_q / attn_k for its interleaved
// rope (GgufArchitecture::unpermute_qk), the permutation is undone: within each head of
// 2 * d rows, GGUF row 2i + j is Hugging Face row j * d + i (j in {0, 1}).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "ingot/core/tensor.h"
#include "ingot/formats/gguf.h"
#include "ingot/formats/gguf_packed.h"
#include "ingot/models/gguf_config.h"

namespace ingot::models {

// The Hugging Face name of GGUF tensor `name` of architecture `arch`
// (general.architecture); empty for a tensor to skip. IoError naming the file and tensor
// when it has no mapping.
std::string gguf_to_hf_name(const std::string& name, const std::string& arch,
                            const std::string& path);

// Undoes llama.cpp's rope permutation of a q or k projection [n_head * 2 * d, ...] (a
// weight or a bias) -> a new tensor of the same shape.
Tensor unpermute_rope_rows(const Tensor& t, int64_t n_head);

// The reverse direction, over the same tables: the GGUF name of Hugging Face tensor
// `hf_name` in architecture `arch` (the general.architecture written); "" when it has none.
std::string hf_to_gguf_name(const std::string& hf_name, const std::string& arch);

// Applies llama.cpp's rope permutation (what its converter does to attn_q / attn_k of a
// llama-family model): the inverse of unpermute_rope_rows. Rows are moved whole, so a
// row-wise quantised weight's packed rows and scales permute the same way.
Tensor permute_rope_rows(const Tensor& t, int64_t n_head);

// Every tensor of `file` by Hugging Face name: plain types mapped without a copy where no
// permutation applies, block types dequantised to float32.
std::map<std::string, Tensor> gguf_state_dict(const formats::GgufFile& file,
                                              const GgufArchitecture& arch);

// A GGUF's tensors with some matrices kept packed (formats/gguf_packed.h).
struct GgufWeights {
  // By Hugging Face name; a packed "<m>.weight" is "<m>.qweight" uint8 + "<m>.scales" f32
  // (rows unpermuted like the float weight would be: rows move whole).
  std::map<std::string, Tensor> state;
  std::map<std::string, formats::PackedLayout> packed;  // module "<m>" -> its layout
};

// As gguf_state_dict, but a 2-D Q4_0 / Q8_0 tensor that `may_pack` accepts (given its
// Hugging Face name and the layout it would have) stays packed (no float copy). Expert
// stacks are always dequantised.
using MayPack = std::function<bool(const std::string& hf_name, const formats::PackedLayout&)>;
GgufWeights gguf_weights(const formats::GgufFile& file, const GgufArchitecture& arch,
                         const MayPack& may_pack);

}  // namespace ingot::models
