#!/usr/bin/env python3
"""Writes tiny GGUF models under tests/fixtures/gguf/models/ with the `gguf` package, laid
out as llama.cpp's converter writes them, and the logits transformers' GGUF loader
(AutoModelForCausalLM.from_pretrained(dir, gguf_file=...)) computes from each file.

  <ref-venv python> tools/reference/make_gguf_model_fixtures.py

  llama.gguf   arch "llama": attn_q / attn_k rows permuted for llama.cpp's rope (the
               loader must undo it), untied output, and a 96-token byte-level tokenizer
               (printable ASCII, one merge, <|endoftext|> as eos) with a chat template, so
               `ingot generate` runs on it; generate.json holds transformers' greedy ids
  qwen2.gguf   arch "qwen2": q/k/v biases, no permutation, untied output
  qwen3.gguf   arch "qwen3": per-head q/k norms, head_dim 128 != hidden / heads (stated by
               attention.key_length; 128 is also transformers' Qwen3Config default, which
               its GGUF loader leaves in place), 2 heads, tied embeddings (no output.weight)
  phi3.gguf    arch "phi3": fused attn_qkv (= qkv_proj) and ffn_up holding [gate | up]
  gemma2.gguf  arch "gemma2": sandwich norms stored as 1 + w (post_attention_norm,
               ffn_norm = pre-feedforward, post_ffw_norm), soft-capping keys, sliding
               window 4 (its one layer slides), tied embeddings
  gemma3.gguf  arch "gemma3": as gemma2 with q/k norms and no soft-capping
  stablelm.gguf  arch "stablelm": LayerNorms with biases, q/k/v biases, partial rotary
               (rope.dimension_count = head_dim / 4), no ffn_norm (parallel residual)
  qwen3moe.gguf  arch "qwen3moe": 4 experts (2 per token) stacked per layer, Q8_0 (judged
               against transformers' model holding the same dequantised weights, see
               qwen3moe())

Weights are random (fixed seed) in a mix of ggml types, so loading exercises the
dequantisers: embeddings F16, q/k Q8_0, v Q5_0, o Q4_1, gate Q4_0, up Q5_1, down Q8_0,
output Q4_0, norms F32. One layer each; a few tens of kilobytes per file.
Each <name>/ gets input_ids.npy (int64 [1, 8]) and logits.npy (float32 [1, 8, vocab]).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import numpy as np
import gguf
import torch
from gguf import GGMLQuantizationType as T
from transformers import AutoModelForCausalLM, AutoTokenizer

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                   "gguf", "models")
VOCAB, HIDDEN, FF = 96, 64, 128
INPUT_IDS = np.array([[1, 17, 42, 5, 88, 3, 60, 29]], dtype=np.int64)


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp convert_hf_to_gguf.py's LlamaModel.permute (rows of q or k)."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def add(w: gguf.GGUFWriter, name: str, x: np.ndarray, qtype: T) -> None:
    x = x.astype(np.float32)
    if qtype == T.F32:
        w.add_tensor(name, x)
    elif qtype == T.F16:
        w.add_tensor(name, x.astype(np.float16))
    else:
        w.add_tensor(name, gguf.quantize(x, qtype), raw_dtype=qtype)


CHAT_TEMPLATE = ("{% for m in messages %}<|endoftext|>{{ m['role'] }}: {{ m['content'] }}\n"
                 "{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}")


def add_tokenizer(w: gguf.GGUFWriter) -> None:
    """93 printable ASCII characters, 'Ġ' (space), 'Ġt' (one merge) and <|endoftext|>."""
    tokens = [chr(c) for c in range(0x21, 0x7E)] + ["\u0120", "\u0120t", "<|endoftext|>"]
    assert len(tokens) == VOCAB
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt2")
    w.add_token_list(tokens)
    w.add_token_types([1] * (VOCAB - 1) + [3])
    w.add_token_merges(["\u0120 t"])
    w.add_eos_token_id(VOCAB - 1)
    w.add_bos_token_id(VOCAB - 1)
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)


def write(name: str, arch: str, head_dim: int, HEADS: int, KV_HEADS: int,
          rng: np.random.Generator) -> str:
    path = os.path.join(OUT, name, name + ".gguf")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    w = gguf.GGUFWriter(path, arch=arch)
    w.add_name(f"tiny-{name}")
    w.add_block_count(1)
    w.add_context_length(128)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    if arch == "stablelm":
        w.add_layer_norm_eps(1e-5)
        w.add_rope_dimension_count(head_dim // 4)  # partial rotary, a quarter of each head
    else:
        w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(VOCAB)
    if arch == "llama":
        w.add_rope_dimension_count(head_dim)
        add_tokenizer(w)
    if arch == "phi3":
        w.add_pad_token_id(0)  # Phi3Config's default pad id 32000 is past this vocabulary
    if arch.startswith("gemma"):
        w.add_sliding_window(4)
    if arch == "gemma2":  # as llama.cpp writes them (transformers' defaults too)
        w.add_attn_logit_softcapping(50.0)
        w.add_final_logit_softcapping(30.0)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)

    def r(*shape: int, scale: float = 0.08) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32) * scale

    add(w, "token_embd.weight", r(VOCAB, HIDDEN, scale=0.5), T.F16)
    q, k = r(HEADS * head_dim, HIDDEN), r(KV_HEADS * head_dim, HIDDEN)
    if arch == "llama":
        q, k = permute(q, HEADS), permute(k, KV_HEADS)
    add(w, "blk.0.attn_norm.weight", 1 + r(HIDDEN, scale=0.1), T.F32)
    if arch == "stablelm":  # LayerNorms with biases
        add(w, "blk.0.attn_norm.bias", r(HIDDEN, scale=0.1), T.F32)
        add(w, "output_norm.bias", r(HIDDEN, scale=0.1), T.F32)
    v = r(KV_HEADS * head_dim, HIDDEN)
    if arch == "phi3":  # fused, as transformers' Phi-3 and llama.cpp hold it
        add(w, "blk.0.attn_qkv.weight", np.concatenate([q, k, v]), T.Q8_0)
    else:
        add(w, "blk.0.attn_q.weight", q, T.Q8_0)
        add(w, "blk.0.attn_k.weight", k, T.Q8_0)
        add(w, "blk.0.attn_v.weight", v, T.Q5_0)
    add(w, "blk.0.attn_output.weight", r(HIDDEN, HEADS * head_dim), T.Q4_1)
    if arch in ("qwen2", "stablelm"):
        add(w, "blk.0.attn_q.bias", r(HEADS * head_dim, scale=0.1), T.F32)
        add(w, "blk.0.attn_k.bias", r(KV_HEADS * head_dim, scale=0.1), T.F32)
        add(w, "blk.0.attn_v.bias", r(KV_HEADS * head_dim, scale=0.1), T.F32)
    if arch in ("qwen3", "gemma3"):
        add(w, "blk.0.attn_q_norm.weight", 1 + r(head_dim, scale=0.1), T.F32)
        add(w, "blk.0.attn_k_norm.weight", 1 + r(head_dim, scale=0.1), T.F32)
    if arch.startswith("gemma"):  # sandwich norms; Gemma's norms are stored as 1 + w
        add(w, "blk.0.post_attention_norm.weight", 1 + r(HIDDEN, scale=0.1), T.F32)
        add(w, "blk.0.post_ffw_norm.weight", 1 + r(HIDDEN, scale=0.1), T.F32)
    if arch != "stablelm":  # stablelm: no ffn_norm = parallel residual
        add(w, "blk.0.ffn_norm.weight", 1 + r(HIDDEN, scale=0.1), T.F32)
    if arch == "phi3":  # ffn_up holds [gate | up]
        add(w, "blk.0.ffn_up.weight", np.concatenate([r(FF, HIDDEN), r(FF, HIDDEN)]), T.Q4_0)
    else:
        add(w, "blk.0.ffn_gate.weight", r(FF, HIDDEN), T.Q4_0)
        add(w, "blk.0.ffn_up.weight", r(FF, HIDDEN), T.Q5_1)
    add(w, "blk.0.ffn_down.weight", r(HIDDEN, FF), T.Q8_0)
    add(w, "output_norm.weight", 1 + r(HIDDEN, scale=0.1), T.F32)
    if arch not in ("qwen3", "gemma2", "gemma3"):
        add(w, "output.weight", r(VOCAB, HIDDEN, scale=0.2), T.Q4_0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def qwen3moe(rng: np.random.Generator) -> None:
    """qwen3moe: transformers reads no qwen3moe GGUF with a small moe_intermediate_size (its
    loader leaves Qwen3MoeConfig's 768), so the judge is transformers' Qwen3MoeForCausalLM
    holding the same weights (the Q8_0 ones dequantised), written here in llama.cpp's layout:
    per-layer stacked experts ffn_{gate,up,down}_exps [E, out, in] and the router
    ffn_gate_inp."""
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
    E, K, MOE_FF, HEADS, KV, HD = 4, 2, 32, 4, 2, 16
    config = Qwen3MoeConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FF,
                            moe_intermediate_size=MOE_FF, num_experts=E, num_experts_per_tok=K,
                            num_hidden_layers=1, num_attention_heads=HEADS,
                            num_key_value_heads=KV, head_dim=HD, norm_topk_prob=True,
                            tie_word_embeddings=False, rms_norm_eps=1e-6, rope_theta=10000.0,
                            max_position_embeddings=128)

    raw: dict[str, tuple[np.ndarray, T]] = {}  # HF name -> (GGUF bytes, type)

    def r(*shape: int, scale: float = 0.08, qtype: T = T.F32) -> np.ndarray:
        """Random weights as the GGUF will hold them (quantised, then dequantised)."""
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        if qtype == T.F32:
            return x
        q = gguf.quantize(x, qtype)
        r.last = (q, qtype)
        return gguf.dequantize(q, qtype).astype(np.float32).reshape(shape)

    def rq(name: str, *shape: int, scale: float = 0.08) -> np.ndarray:
        x = r(*shape, scale=scale, qtype=T.Q8_0)
        raw[name] = r.last
        return x

    hf = {
        "model.embed_tokens.weight": rq("model.embed_tokens.weight", VOCAB, HIDDEN, scale=0.5),
        "model.layers.0.self_attn.q_proj.weight": rq("model.layers.0.self_attn.q_proj.weight", HEADS * HD, HIDDEN),
        "model.layers.0.self_attn.k_proj.weight": rq("model.layers.0.self_attn.k_proj.weight", KV * HD, HIDDEN),
        "model.layers.0.self_attn.v_proj.weight": rq("model.layers.0.self_attn.v_proj.weight", KV * HD, HIDDEN),
        "model.layers.0.self_attn.o_proj.weight": rq("model.layers.0.self_attn.o_proj.weight", HIDDEN, HEADS * HD),
        "model.layers.0.self_attn.q_norm.weight": 1 + r(HD, scale=0.1),
        "model.layers.0.self_attn.k_norm.weight": 1 + r(HD, scale=0.1),
        "model.layers.0.input_layernorm.weight": 1 + r(HIDDEN, scale=0.1),
        "model.layers.0.post_attention_layernorm.weight": 1 + r(HIDDEN, scale=0.1),
        "model.layers.0.mlp.gate.weight": r(E, HIDDEN, scale=0.5),
        "model.norm.weight": 1 + r(HIDDEN, scale=0.1),
        "lm_head.weight": rq("lm_head.weight", VOCAB, HIDDEN, scale=0.2),
    }
    gate = rq("gate_exps", E, MOE_FF, HIDDEN)
    up = rq("up_exps", E, MOE_FF, HIDDEN)
    down = rq("down_exps", E, HIDDEN, MOE_FF)
    hf["model.layers.0.mlp.experts.gate_up_proj"] = np.concatenate([gate, up], axis=1)
    hf["model.layers.0.mlp.experts.down_proj"] = down
    model = Qwen3MoeForCausalLM(config).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in hf.items()}, strict=True)
    with torch.no_grad():
        logits = model(torch.from_numpy(INPUT_IDS)).logits.numpy().astype(np.float32)

    path = os.path.join(OUT, "qwen3moe", "qwen3moe.gguf")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    w = gguf.GGUFWriter(path, arch="qwen3moe")
    w.add_name("tiny-qwen3moe")
    w.add_block_count(1)
    w.add_context_length(128)
    w.add_embedding_length(HIDDEN)
    w.add_feed_forward_length(FF)
    w.add_expert_feed_forward_length(MOE_FF)
    w.add_expert_count(E)
    w.add_expert_used_count(K)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_key_length(HD)
    w.add_value_length(HD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(VOCAB)
    names = {"model.embed_tokens.weight": "token_embd.weight",
             "model.layers.0.self_attn.q_proj.weight": "blk.0.attn_q.weight",
             "model.layers.0.self_attn.k_proj.weight": "blk.0.attn_k.weight",
             "model.layers.0.self_attn.v_proj.weight": "blk.0.attn_v.weight",
             "model.layers.0.self_attn.o_proj.weight": "blk.0.attn_output.weight",
             "model.layers.0.self_attn.q_norm.weight": "blk.0.attn_q_norm.weight",
             "model.layers.0.self_attn.k_norm.weight": "blk.0.attn_k_norm.weight",
             "model.layers.0.input_layernorm.weight": "blk.0.attn_norm.weight",
             "model.layers.0.post_attention_layernorm.weight": "blk.0.ffn_norm.weight",
             "model.layers.0.mlp.gate.weight": "blk.0.ffn_gate_inp.weight",
             "model.norm.weight": "output_norm.weight",
             "lm_head.weight": "output.weight"}
    for hf_name, gguf_name in names.items():
        if hf_name in raw:
            w.add_tensor(gguf_name, raw[hf_name][0], raw_dtype=raw[hf_name][1])
        else:
            add(w, gguf_name, hf[hf_name], T.F32)
    for part in ("gate", "up", "down"):
        q, qtype = raw[part + "_exps"]
        w.add_tensor(f"blk.0.ffn_{part}_exps.weight", q, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    np.save(os.path.join(OUT, "qwen3moe", "input_ids.npy"), INPUT_IDS)
    np.save(os.path.join(OUT, "qwen3moe", "logits.npy"), logits)
    print("qwen3moe", type(model).__name__, logits.shape, os.path.getsize(path))


def main() -> None:
    rng = np.random.default_rng(40)
    for name, arch, head_dim, heads, kv_heads in [("llama", "llama", 16, 4, 2),
                                                  ("qwen2", "qwen2", 16, 4, 2),
                                                  ("qwen3", "qwen3", 128, 2, 1),
                                                  ("phi3", "phi3", 16, 4, 4),
                                                  ("gemma2", "gemma2", 16, 4, 2),
                                                  ("gemma3", "gemma3", 16, 4, 2),
                                                  ("stablelm", "stablelm", 16, 4, 4)]:
        path = write(name, arch, head_dim, heads, kv_heads, rng)
        d_keep = tempfile.mkdtemp()  # transformers wants a folder + file name
        shutil.copy(path, os.path.join(d_keep, "m.gguf"))
        model = AutoModelForCausalLM.from_pretrained(d_keep, gguf_file="m.gguf",
                                                     dtype=torch.float32)
        with torch.no_grad():
            logits = model(torch.from_numpy(INPUT_IDS)).logits.numpy().astype(np.float32)
        if name == "llama":
            tok = AutoTokenizer.from_pretrained(d_keep, gguf_file="m.gguf")
            prompt = tok("Hi there, tell me")["input_ids"]
            out = model.generate(torch.tensor([prompt]), max_new_tokens=8, do_sample=False)
            with open(os.path.join(OUT, name, "generate.json"), "w") as f:
                json.dump({"prompt": "Hi there, tell me", "prompt_ids": prompt,
                           "generated_ids": out[0, len(prompt):].tolist()}, f)
            shutil.rmtree(d_keep)
        np.save(os.path.join(OUT, name, "input_ids.npy"), INPUT_IDS)
        np.save(os.path.join(OUT, name, "logits.npy"), logits)
        if name != "llama":
            shutil.rmtree(d_keep)
        print(name, type(model).__name__, logits.shape, os.path.getsize(path))
    qwen3moe(rng)


if __name__ == "__main__":
    main()
