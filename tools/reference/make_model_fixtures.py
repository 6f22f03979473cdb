#!/usr/bin/env python3
"""Builds tiny random-weight Hugging Face checkpoints and their reference outputs.

For each architecture ingot supports, a small config (hidden 64, 2 layers, small vocab)
with deliberate variety (GQA, tied/untied embeddings, qkv bias, q/k norm, rope scaling,
sliding window, bf16 weights, sharded weights) is instantiated with a fixed seed, saved
with save_pretrained, and run in float32 eager mode on a right-padded batch. Written to
tests/fixtures/models/<name>/:

  config.json, model.safetensors (or shards + index)   the checkpoint
  input_ids.npy, attention_mask.npy [, token_type_ids.npy]   int64 inputs [batch, seq]
  logits.npy (causal LMs) or last_hidden_state.npy + pooler_output.npy (BERT)   float32
  hidden_states.npy   float32 [layers + 1, batch, seq, hidden] (output_hidden_states)
  reference.json   tool versions and what produced the files

Run with the reference venv:  $(tools/reference/setup-venv) tools/reference/make_model_fixtures.py
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from transformers import (BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                          LlamaForCausalLM, MistralConfig, MistralForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT = os.path.join(ROOT, "tests", "fixtures", "models")
VOCAB = 96
BATCH_LENGTHS = [9, 5]  # right padding: the second row has 4 padding positions
SEQ = max(BATCH_LENGTHS)

COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              max_position_embeddings=128, rms_norm_eps=1e-6, attn_implementation="eager")


def causal_cases():
    return [
        # name, class, config, save options
        ("llama", LlamaForCausalLM, LlamaConfig(
            **COMMON, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False),
         dict(max_shard_size="60KB")),  # sharded: exercises model.safetensors.index.json
        ("llama_llama3_rope_tied_bf16", LlamaForCausalLM, LlamaConfig(
            **COMMON, num_attention_heads=4, num_key_value_heads=1, tie_word_embeddings=True,
            rope_parameters=dict(rope_type="llama3", rope_theta=500000.0, factor=8.0,
                                 low_freq_factor=1.0, high_freq_factor=4.0,
                                 original_max_position_embeddings=16)),
         dict(dtype=torch.bfloat16)),
        ("mistral_sliding_window", MistralForCausalLM, MistralConfig(
            **COMMON, num_attention_heads=4, num_key_value_heads=2, sliding_window=4,
            tie_word_embeddings=False), {}),
        ("qwen2_linear_rope", Qwen2ForCausalLM, Qwen2Config(
            **COMMON, num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
            rope_parameters=dict(rope_type="linear", rope_theta=10000.0, factor=2.0)), {}),
        ("qwen2_yarn_rope", Qwen2ForCausalLM, Qwen2Config(
            **COMMON, num_attention_heads=4, num_key_value_heads=4, tie_word_embeddings=False,
            rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0,
                                 original_max_position_embeddings=32)), {}),
        ("qwen3", Qwen3ForCausalLM, Qwen3Config(
            **COMMON, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
            tie_word_embeddings=True), {}),
        ("qwen3_dynamic_rope_f16", Qwen3ForCausalLM, Qwen3Config(
            **COMMON, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="dynamic", rope_theta=10000.0, factor=2.0)),
         dict(dtype=torch.float16)),
        ("gpt2", GPT2LMHeadModel, GPT2Config(
            vocab_size=VOCAB, n_embd=64, n_layer=2, n_head=4, n_positions=64,
            bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1,
            attn_implementation="eager"), {}),
    ]


def inputs(rng, with_token_types=False):
    ids = rng.integers(1, VOCAB, size=(len(BATCH_LENGTHS), SEQ), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, n in enumerate(BATCH_LENGTHS):
        mask[row, :n] = 1
        ids[row, n:] = 0  # the padding token
    out = {"input_ids": ids, "attention_mask": mask}
    if with_token_types:
        tt = np.zeros_like(ids)
        tt[:, SEQ // 2:] = 1
        out["token_type_ids"] = tt * mask
    return out


def save_case(name, model, feeds, outputs, save_options):
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    dtype = save_options.pop("dtype", None)
    if dtype is not None:
        model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True, **save_options)
    for key in ("generation_config.json",):
        path = os.path.join(folder, key)
        if os.path.exists(path):
            os.remove(path)
    for key, value in {**feeds, **outputs}.items():
        np.save(os.path.join(folder, key + ".npy"), value)
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump({"torch": torch.__version__, "transformers": transformers.__version__,
                   "numpy": np.__version__, "script": "tools/reference/make_model_fixtures.py",
                   "weights_dtype": str(dtype or torch.float32),
                   "compute_dtype": "float32", "attn_implementation": "eager"}, f, indent=2)


@torch.no_grad()
def run(model, feeds):
    torch_feeds = {k: torch.from_numpy(v) for k, v in feeds.items()}
    return model(**torch_feeds, output_hidden_states=True)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, cls, config, save_options in causal_cases():
        torch.manual_seed(0)
        model = cls(config).eval()
        feeds = inputs(rng)
        if "dtype" in save_options:
            # The reference runs in float32 on weights rounded to the stored dtype. Only
            # parameters are rounded: buffers such as rotary inv_freq stay float32.
            for p in model.parameters():
                p.data = p.data.to(save_options["dtype"]).to(torch.float32)
        out = run(model, feeds)
        outputs = {"logits": out.logits.float().numpy(),
                   "hidden_states": torch.stack(out.hidden_states).float().numpy()}
        save_case(name, model, feeds, outputs, dict(save_options))
        print("wrote", name)

    torch.manual_seed(0)
    bert = BertModel(BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                                num_attention_heads=4, intermediate_size=128,
                                max_position_embeddings=64, attn_implementation="eager")).eval()
    feeds = inputs(rng, with_token_types=True)
    out = run(bert, feeds)
    save_case("bert", bert, feeds, {"last_hidden_state": out.last_hidden_state.numpy(),
                                    "pooler_output": out.pooler_output.numpy(),
                                    "hidden_states": torch.stack(out.hidden_states).numpy()}, {})
    print("wrote bert")


if __name__ == "__main__":
    sys.exit(main())
