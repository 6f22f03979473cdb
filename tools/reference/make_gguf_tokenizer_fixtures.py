#!/usr/bin/env python3
"""Writes tokenizer-only GGUFs under tests/fixtures/gguf/ and what transformers' GGUF
tokenizer (AutoTokenizer.from_pretrained(dir, gguf_file=...)) makes of the tokenizer
corpus, for ingot's GGUF tokenizer test.

  <ref-venv python> tools/reference/make_gguf_tokenizer_fixtures.py

The vocabularies come from the committed tokenizer fixtures (tests/fixtures/tokenizers/),
written as llama.cpp's converter writes tokenizer metadata:

  tok_gpt2.gguf     tokenizer.ggml.model "gpt2" (byte-level BPE with merges), pre "gpt2",
                    <|endoftext|> a control token (type 3) and bos, add_bos_token true
  tok_qwen2.gguf    the same vocabulary with pre "qwen2" (the Qwen2 split regex), a
                    user-defined token (type 4) and a chat template
  tok_llama.gguf    tokenizer.ggml.model "llama" (SentencePiece BPE with byte fallback,
                    scores, token types, no merges: transformers derives them from the
                    scores), bos/eos/unk ids, add_bos_token true
  tok_phi3.gguf     the same vocabulary in a phi3 file: transformers' Phi-3 variant (the
                    prefix space from a normalizer, no Metaspace)
  tok_gemma.gguf    the same vocabulary in a gemma2 file, runs of "▁" stored as spaces:
                    transformers' Gemma variant (spaces respelled, merges from token
                    order, Replace normalizer + Split(" ") pre-tokenizer)

expected_tokenizers.json: {"strings": [...], "<name>": {"with_special": [[ids]...],
"without_special": [[ids]...], "decoded": [text...], "vocab_size": n}}.
"""
from __future__ import annotations

import json
import os

import gguf
from transformers import AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "..", "tests", "fixtures")
OUT = os.path.join(FIX, "gguf")


def load(name: str) -> dict:
    with open(os.path.join(FIX, "tokenizers", name, "tokenizer.json"), encoding="utf-8") as f:
        return json.load(f)


def by_id(vocab: dict) -> list[str]:
    tokens = [""] * len(vocab)
    for tok, i in vocab.items():
        tokens[i] = tok
    return tokens


def write(path: str, arch: str, kv: dict) -> None:
    w = gguf.GGUFWriter(path, arch=arch)
    for key, (kind, value) in kv.items():
        getattr(w, f"add_{kind}")(key, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def byte_level(pre: str, extra_user_token: bool, chat_template: str | None,
               add_bos: bool) -> dict:
    t = load("gpt2")
    tokens = by_id(t["model"]["vocab"])
    for a in t["added_tokens"]:
        if a["id"] >= len(tokens):
            tokens.extend([""] * (a["id"] + 1 - len(tokens)))
        tokens[a["id"]] = a["content"]
    types = [1] * len(tokens)
    for a in t["added_tokens"]:
        types[a["id"]] = 3 if a["special"] else 4
    if extra_user_token:
        tokens.append("<tool_call>")
        types.append(4)
    merges = [" ".join(m) if isinstance(m, list) else m for m in t["model"]["merges"]]
    eot = tokens.index("<|endoftext|>")
    kv = {
        "tokenizer.ggml.model": ("string", "gpt2"),
        "tokenizer.ggml.pre": ("string", pre),
        "tokenizer.ggml.tokens": ("array", tokens),
        "tokenizer.ggml.token_type": ("array", types),
        "tokenizer.ggml.merges": ("array", merges),
        "tokenizer.ggml.bos_token_id": ("uint32", eot),
        "tokenizer.ggml.eos_token_id": ("uint32", eot),
        "tokenizer.ggml.add_bos_token": ("bool", add_bos),
    }
    if chat_template:
        kv["tokenizer.chat_template"] = ("string", chat_template)
    return kv


def sentencepiece(spaces_as_spaces: bool = False) -> dict:
    t = load("llama2")
    tokens = by_id(t["model"]["vocab"])
    if spaces_as_spaces:  # Gemma files store runs of "▁" as spaces
        tokens = tokens + ["  ", "    "]
    types = []
    for i, tok in enumerate(tokens):
        if i == 0:
            types.append(2)  # UNKNOWN
        elif tok in ("<s>", "</s>"):
            types.append(3)  # CONTROL
        elif tok.startswith("<0x") and tok.endswith(">") and len(tok) == 6:
            types.append(6)  # BYTE
        else:
            types.append(1)
    # llama.cpp writes sentencepiece scores; for a BPE vocabulary the merge rank order:
    # a token made by an earlier merge scores higher.
    scores = [-float(i) for i in range(len(tokens))]
    return {
        "tokenizer.ggml.model": ("string", "llama"),
        "tokenizer.ggml.pre": ("string", "default"),
        "tokenizer.ggml.tokens": ("array", tokens),
        "tokenizer.ggml.scores": ("array", scores),
        "tokenizer.ggml.token_type": ("array", types),
        "tokenizer.ggml.bos_token_id": ("uint32", 1),
        "tokenizer.ggml.eos_token_id": ("uint32", 2),
        "tokenizer.ggml.unknown_token_id": ("uint32", 0),
        "tokenizer.ggml.add_bos_token": ("bool", True),
        "tokenizer.ggml.add_eos_token": ("bool", False),
    }


def main() -> None:
    with open(os.path.join(FIX, "tokenizers", "corpus.json"), encoding="utf-8") as f:
        strings = json.load(f)["strings"]
    strings = strings[:40] + ["<|endoftext|>hi<|endoftext|>", "a <tool_call> b", "<s> x </s>"]
    chat = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
            "{% endfor %}")
    files = {
        "tok_gpt2": ("llama", byte_level("gpt2", False, None, True)),
        "tok_qwen2": ("qwen2", byte_level("qwen2", True, chat, False)),
        "tok_llama": ("llama", sentencepiece()),
        "tok_phi3": ("phi3", sentencepiece()),
        "tok_gemma": ("gemma2", sentencepiece(spaces_as_spaces=True)),
    }
    expected = {"strings": strings}
    for name, (arch, kv) in files.items():
        path = os.path.join(OUT, name + ".gguf")
        write(path, arch, kv)
        tok = AutoTokenizer.from_pretrained(OUT, gguf_file=name + ".gguf")
        with_special = [tok(s, add_special_tokens=True)["input_ids"] for s in strings]
        expected[name] = {
            "with_special": with_special,
            "without_special": [tok(s, add_special_tokens=False)["input_ids"] for s in strings],
            "decoded": [tok.decode(ids, skip_special_tokens=False) for ids in with_special],
            "vocab_size": len(tok),
            "bos_token": tok.bos_token,
            "eos_token": tok.eos_token,
        }
    with open(os.path.join(OUT, "expected_tokenizers.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, ensure_ascii=False)
    print(OUT)


if __name__ == "__main__":
    main()
