#!/usr/bin/env python3
"""Converts a Qwen3 safetensors checkpoint (bf16, as ingot's bench writes it) to GGUF.

  python gguf_from_safetensors.py MODEL_DIR OUT.gguf --type F32|BF16|Q8_0|Q4_0|...

Only what the side-by-side benchmark needs: the qwen3 architecture's metadata from
config.json, tensor names mapped with the gguf package's own table for MODEL_ARCH.QWEN3,
and a placeholder SentencePiece-style vocabulary of vocab_size tokens (the benchmark feeds
token ids; it never tokenizes text). llama.cpp's qwen3 graph uses NeoX-style rotary
(rotate halves), the layout of the HF weights, so q_proj / k_proj are stored as they are
(no permutation, unlike its llama architecture). 1-D tensors (norm weights) stay F32, as
llama.cpp's converter keeps them; matrices are written in --type (gguf.quants.quantize).
Run in the venv of tools/llamacpp/setup-venv.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys

import numpy as np
import gguf


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """name -> float32 array (a copy per tensor; the file is memory-mapped)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[begin:end]
        if info["dtype"] == "BF16":
            bits = raw.view(np.uint16).astype(np.uint32) << 16
            arr = bits.view(np.float32)
        elif info["dtype"] == "F32":
            arr = np.array(raw.view(np.float32))
        else:
            sys.exit(f"gguf_from_safetensors: tensor {name} has dtype {info['dtype']}; "
                     "expected BF16 or F32")
        out[name] = arr.reshape(info["shape"])
    return out


def add_placeholder_vocab(w: gguf.GGUFWriter, vocab_size: int) -> None:
    """<unk>, <s>, </s>, the 256 byte tokens, then filler pieces up to vocab_size."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    tokens += [f"\u2581t{i}" for i in range(len(tokens), vocab_size)]
    types += [gguf.TokenType.NORMAL] * (vocab_size - len(types))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * vocab_size)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("out")
    ap.add_argument("--type", default="F32", help="GGML type of the matrices (F32, BF16, Q8_0, ...)")
    a = ap.parse_args()
    qtype = gguf.GGMLQuantizationType[a.type.upper()]
    cfg = json.load(open(os.path.join(a.model_dir, "config.json")))
    if cfg.get("model_type") != "qwen3":
        sys.exit(f"gguf_from_safetensors: {a.model_dir} is a {cfg.get('model_type')} model; "
                 "only qwen3 is converted")
    tensors = read_safetensors(os.path.join(a.model_dir, "model.safetensors"))
    layers = cfg["num_hidden_layers"]
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN3, layers)

    w = gguf.GGUFWriter(a.out + ".tmp", "qwen3")
    w.add_name("ingot synthetic qwen3")
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(layers)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_rope_freq_base(cfg["rope_theta"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    add_placeholder_vocab(w, cfg["vocab_size"])
    for hf_name, arr in tensors.items():
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            sys.exit(f"gguf_from_safetensors: no GGUF name for tensor {hf_name}")
        if arr.ndim == 1 or qtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, np.ascontiguousarray(arr, dtype=np.float32))
        else:
            w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(a.out + ".tmp", a.out)
    print(json.dumps({"gguf": a.out, "type": qtype.name, "tensors": len(tensors)}))


if __name__ == "__main__":
    main()
