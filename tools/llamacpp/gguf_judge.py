#!/usr/bin/env python3
"""llama.cpp judges a GGUF file ingot wrote (`ingot export --format gguf`).

  python gguf_judge.py CASE_DIR

CASE_DIR holds model.gguf and case.json:
  {"prompt_ids": [...],          the prompt, as ingot's tokenizer encodes it
   "ingot_greedy": [...],        ingot's greedy continuation (`ingot generate --greedy`)
   "texts": [...], "ingot_ids": [[...]]   strings and ingot's ids for them (no specials)}
and ingot_logits.npy, ingot's logits [vocab] of the prompt's last position. For a file
with block tensors, case.json also holds "ingot_greedy_exact" and the folder
ingot_logits_exact.npy: ingot with f32 activations (exact arithmetic on the quantised
weights), judged against llama.cpp on a copy whose blocks the gguf package dequantised
to F32 ("dequantised" below). With
"vocab_only": true (a file holding only metadata) llama.cpp loads the vocabulary alone and
only the tokenizer is judged.

Prints one JSON line:
  structure      the gguf package's reader: version, alignment, every tensor's ggml type,
                 data offsets aligned, general.architecture / file_type
  greedy         llama.cpp's greedy ids for as many steps as ingot_greedy, the index of
                 the first one that differs (-1: none) and there llama.cpp's logit of its
                 id minus its logit of ingot's id (tie_gap)
  logits         max |llama.cpp - ingot| over the prompt's last position, and that divided
                 by max |ingot logit|
  sequence       with ingot_sequence.npy (ingot's logits [positions, vocab] over the prompt
                 and its greedy ids): llama.cpp's logits at every one of those positions
  dequantised    logits, greedy and sequence as above, for the F32 copy against ingot's
                 exact ones (ingot_sequence_exact.npy)
  tokenizer      the texts whose llama.cpp ids (tokenize: no bos, special and added tokens
                 parsed, as tokenizers matches added tokens) differ from ingot's
Run in the venv of tools/llamacpp/setup-venv.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np


def structure(path: str) -> dict:
    import gguf
    r = gguf.GGUFReader(path)
    fields = {name: f for name, f in r.fields.items()}

    def scalar(key):
        f = fields.get(key)
        if f is None:
            return None
        v = f.parts[f.data[0]]
        if f.types and f.types[0] == gguf.GGUFValueType.STRING:
            return bytes(v).decode("utf-8")
        return v.tolist()[0]

    alignment = scalar("general.alignment") or 32
    return {
        "version": scalar("GGUF.version"),
        "alignment": alignment,
        "architecture": scalar("general.architecture"),
        "file_type": scalar("general.file_type"),
        "quantization_version": scalar("general.quantization_version"),
        "tensors": {t.name: t.tensor_type.name for t in r.tensors},
        "shapes": {t.name: [int(x) for x in t.shape] for t in r.tensors},
        "offsets_aligned": all((int(t.data_offset) - int(r.data_offset)) % alignment == 0
                               for t in r.tensors),
        "tokens": len(fields["tokenizer.ggml.tokens"].data) if "tokenizer.ggml.tokens" in fields else 0,
    }


def tokenizer(m, case: dict) -> dict:
    bad = []
    for text, ids in zip(case.get("texts", []), case.get("ingot_ids", [])):
        cpp = m.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if [int(t) for t in cpp] != [int(t) for t in ids]:
            bad.append({"text": text, "llama_cpp": [int(t) for t in cpp], "ingot": ids})
    return {"texts": len(case.get("texts", [])), "mismatches": bad[:5], "mismatch_count": len(bad)}


def run(path: str, prompt: list, want: list, ingot: np.ndarray, llama_cpp):
    """llama.cpp on `path`: the prompt's last logits against ingot's, greedy ids; and the model."""
    m = llama_cpp.Llama(path, n_ctx=max(64, len(prompt) + len(want) + 8), n_batch=512,
                        n_threads=2, n_threads_batch=2, logits_all=False, verbose=False)
    vocab = m.n_vocab()

    def last_logits() -> np.ndarray:
        return np.array(np.ctypeslib.as_array(m._ctx.get_logits(), shape=(vocab,)), dtype=np.float32)

    m.reset()
    m.eval(prompt)
    first = last_logits()
    diff = float(np.max(np.abs(first - ingot))) if ingot.shape == first.shape else float("inf")
    scale = float(np.max(np.abs(ingot)))
    out = {"logits": {"max_abs": diff, "scale": scale, "relative": diff / max(scale, 1e-30),
                      "vocab": vocab, "argmax_equal": int(np.argmax(first)) == int(np.argmax(ingot))}}
    got, tok, step_logits = [], int(np.argmax(first)), first
    mismatch, tie_gap = -1, 0.0
    for i in range(len(want)):
        got.append(tok)
        if mismatch < 0 and tok != want[i]:
            mismatch = i
            tie_gap = float(step_logits[tok] - step_logits[want[i]])
        m.eval([tok])
        step_logits = last_logits()
        tok = int(np.argmax(step_logits))
    out["greedy"] = {"ids": got, "first_mismatch": mismatch, "steps": len(want), "tie_gap": tie_gap}
    return out, m


def sequence(path: str, ids: list, ingot: np.ndarray, llama_cpp) -> dict:
    """llama.cpp's logits at every position of `ids` (prompt + ingot's greedy ids, teacher
    forced) against ingot's [len(ids), vocab]: positions past the prompt exercise the rope
    (and its scaling) where the last prompt position alone barely does."""
    m = llama_cpp.Llama(path, n_ctx=max(64, len(ids) + 8), n_batch=512, n_threads=2,
                        n_threads_batch=2, logits_all=True, verbose=False)
    m.reset()
    m.eval(ids)
    got = np.asarray(m.scores[:len(ids)], dtype=np.float32)
    m.close()
    diff = float(np.max(np.abs(got - ingot))) if got.shape == ingot.shape else float("inf")
    scale = float(np.max(np.abs(ingot)))
    return {"max_abs": diff, "scale": scale, "relative": diff / max(scale, 1e-30),
            "positions": len(ids)}


def dequantised_copy(src: str, dst: str) -> None:
    """`src` with every block tensor dequantised to F32 by the gguf package (which mirrors
    ggml's dequantize_row_*), the metadata copied: the file's values without llama.cpp's
    quantised arithmetic (its matmuls quantise the activations to Q8 for Q8_0 / Q4_0)."""
    import gguf
    r = gguf.GGUFReader(src)
    arch = bytes(r.fields["general.architecture"].parts[-1]).decode("utf-8")
    w = gguf.GGUFWriter(dst, arch)
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            if len(f.types) < 2:  # the gguf package writes no empty arrays
                raise SystemExit(f"gguf_judge: key {name} is an empty array; cannot copy it")
            if f.types[1] == gguf.GGUFValueType.STRING:
                w.add_array(name, [bytes(f.parts[i]).decode("utf-8", errors="surrogateescape")
                                   for i in f.data])
            else:
                w.add_key_value(name, [f.parts[i].tolist()[0] for i in f.data], t, sub_type=f.types[1])
        elif t == gguf.GGUFValueType.STRING:
            w.add_key_value(name, bytes(f.parts[f.data[0]]).decode("utf-8"), t)
        else:
            w.add_key_value(name, f.parts[f.data[0]].tolist()[0], t)
    for t in r.tensors:
        a = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w.add_tensor(t.name, a.reshape([int(x) for x in reversed(t.shape)]),
                     raw_dtype=gguf.GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    case_dir = sys.argv[1]
    path = os.path.join(case_dir, "model.gguf")
    with open(os.path.join(case_dir, "case.json"), encoding="utf-8") as f:
        case = json.load(f)
    out = {"structure": structure(path)}

    import llama_cpp
    if case.get("vocab_only"):
        m = llama_cpp.Llama(path, vocab_only=True, verbose=False)
        out["tokenizer"] = tokenizer(m, case)
        print(json.dumps(out))
        return
    prompt = [int(t) for t in case["prompt_ids"]]
    ingot = np.load(os.path.join(case_dir, "ingot_logits.npy")).astype(np.float32).reshape(-1)
    direct, m = run(path, prompt, [int(t) for t in case["ingot_greedy"]], ingot, llama_cpp)
    out.update(direct)
    out["tokenizer"] = tokenizer(m, case)
    m.close()
    seq = os.path.join(case_dir, "ingot_sequence.npy")
    if os.path.exists(seq):
        out["sequence"] = sequence(path, prompt + [int(t) for t in case["ingot_greedy"]],
                                   np.load(seq).astype(np.float32), llama_cpp)
    quantised = any(t not in ("F32", "F16", "BF16") for t in out["structure"]["tensors"].values())
    if quantised and "ingot_greedy_exact" in case:
        copy = os.path.join(case_dir, "dequantised.gguf")
        dequantised_copy(path, copy)
        exact = np.load(os.path.join(case_dir, "ingot_logits_exact.npy")).astype(np.float32).reshape(-1)
        out["dequantised"], m = run(copy, prompt, [int(t) for t in case["ingot_greedy_exact"]], exact,
                                    llama_cpp)
        m.close()
        seq = os.path.join(case_dir, "ingot_sequence_exact.npy")
        if os.path.exists(seq):
            out["dequantised"]["sequence"] = sequence(
                copy, prompt + [int(t) for t in case["ingot_greedy_exact"]],
                np.load(seq).astype(np.float32), llama_cpp)
        os.remove(copy)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
