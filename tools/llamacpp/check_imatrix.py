#!/usr/bin/env python3
"""Checks an importance matrix of tools/llamacpp/imatrix_quantize against transformers.

  <ref-venv python> tools/llamacpp/check_imatrix.py IMATRIX.gguf MODEL_DIR [--tol 1e-3]

MODEL_DIR: the Hugging Face folder of the GGUF the matrix was made from (a Llama-style
model: SmolLM2 from tools/reference/fetch_smollm2.py). Runs the file's calibration text
(imatrix.datasets) through transformers in the file's chunks (imatrix.chunk_count of
imatrix.chunk_size tokens, no BOS: SmolLM2's vocabulary adds none), takes the mean over
tokens of the squared inputs of every linear of the blocks, and compares them with the
file's in_sum2 / counts (max |difference| / max |value| per matrix). Prints the worst and
exits 1 past --tol.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("imatrix")
    ap.add_argument("model_dir")
    ap.add_argument("--tol", type=float, default=1e-3)
    a = ap.parse_args()
    import torch
    from gguf import GGUFReader
    from transformers import AutoModelForCausalLM, AutoTokenizer
    r = GGUFReader(a.imatrix)
    text = r.fields["imatrix.datasets"].contents()[0]
    chunks = int(r.fields["imatrix.chunk_count"].contents())
    size = int(r.fields["imatrix.chunk_size"].contents())
    stored = {t.name: np.array(t.data, dtype=np.float64).ravel() for t in r.tensors}
    tok = AutoTokenizer.from_pretrained(a.model_dir)
    ids = tok(open(text, encoding="utf-8").read(), add_special_tokens=False)["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(a.model_dir, dtype=torch.float32).eval()
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    sums: dict[str, torch.Tensor] = {}

    def hook(name):
        def add(_module, args):
            x = args[0].reshape(-1, args[0].shape[-1]).double()
            sums[name] = sums.get(name, 0) + (x * x).sum(0)
        return add

    for i, layer in enumerate(model.model.layers):
        for path, short in names.items():
            layer.get_submodule(path).register_forward_pre_hook(hook(f"blk.{i}.{short}.weight"))
    with torch.no_grad():
        for c in range(chunks):
            model(torch.tensor([ids[c * size:(c + 1) * size]]))
    worst, worst_name = 0.0, ""
    for name, total in sums.items():
        ours = total.numpy() / (chunks * size)
        theirs = stored[name + ".in_sum2"] / stored[name + ".counts"][0]
        err = float(np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs)))
        if err > worst:
            worst, worst_name = err, name
    missing = sorted(n[:-len(".in_sum2")] for n in stored
                     if n.endswith(".in_sum2") and n[:-len(".in_sum2")] not in sums)
    print(f"{len(sums)} matrices over {chunks} x {size} tokens; worst {worst_name}: {worst:.2e}"
          + (f"; in the file only: {missing}" if missing else ""))
    if worst > a.tol or missing:
        sys.exit(1)


if __name__ == "__main__":
    main()
