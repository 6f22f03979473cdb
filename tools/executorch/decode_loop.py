#!/usr/bin/env python3
"""Greedy decode loop over ExecuTorch's runtime on an ingot decode program (.pte).

The decode program (ingot's export_for_generation through the ExecuTorch exporter) takes
input_ids [batch, tokens], in seed 003's layout also attention_mask [batch, 1, tokens,
cache slots] bool (causal over the slots) and position_ids [batch, tokens], and the static
KV cache tensors (key_cache.N, value_cache.N, cache_position); it returns logits plus the
updated cache ("output.<name>"). The Python
runtime has no set_output_data_ptr, so each step feeds the returned cache back as the next
step's input (a copy per step); the in-place binding is the C++ runtime's (docs/executorch.md).

  python decode_loop.py MODEL.pte --io IO.json --steps N [--logits-out FILE.npy]

IO.json: {"inputs": [names], "outputs": [names], "prompt": "prompt.npy",
"initial": {cache name: "file.npy"}, optional "sliding_window": W (the mask hides slots
W or more positions back)}. Prints one JSON object {"tokens": [...],
"executorch": version, "cache_position": int}; tokens are the prompt's continuation (the
argmax after the prompt, then after each fed token). --logits-out saves the last
position's logits of every step as [N, vocab] float32. --bench-steps K times K more
single-token steps (decode_tokens_per_s; the cache is handed from outputs to inputs
without a copy). Run with the reference venv.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--io", required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--logits-out")
    ap.add_argument("--bench-steps", type=int, default=0,
                    help="time K more single-token steps after the loop (decode_tokens_per_s)")
    args = ap.parse_args()
    import torch
    from executorch.runtime import Runtime
    from importlib.metadata import version

    io = json.load(open(args.io))
    base = os.path.dirname(args.io)
    method = Runtime.get().load_program(args.model).load_method("forward")
    inputs, outputs = io["inputs"], io["outputs"]
    assert inputs[0] == "input_ids", inputs
    seed_layout = inputs[1:3] == ["attention_mask", "position_ids"]
    cache_names = inputs[3:] if seed_layout else inputs[1:]
    state = {n: torch.from_numpy(np.load(os.path.join(base, io["initial"][n]))) for n in cache_names}
    slots = next(t.shape[2] for t in state.values() if t.dim() == 4)
    logits_at = outputs.index("logits")
    ids = torch.from_numpy(np.load(os.path.join(base, io["prompt"])))
    position = 0  # absolute position of the next token

    def step_inputs(ids):
        if not seed_layout:
            return [ids] + [state[n] for n in cache_names]
        pos = torch.arange(position, position + ids.shape[1], dtype=torch.int64)
        k = torch.arange(slots)[None, :]
        mask = k <= pos[:, None]  # [tokens, slots]: causal over the cache slots
        if io.get("sliding_window"):
            mask &= pos[:, None] - k < io["sliding_window"]
        return [ids, mask[None, None], pos[None]] + [state[n] for n in cache_names]

    tokens, last = [], []
    start = time.perf_counter()
    for _ in range(args.steps):
        outs = method.execute(step_inputs(ids))
        position += ids.shape[1]
        for n in cache_names:
            state[n] = outs[outputs.index("output." + n)].clone()
        step_logits = outs[logits_at][0, -1].clone()
        last.append(step_logits.numpy())
        tokens.append(int(step_logits.argmax()))
        ids = torch.tensor([[tokens[-1]]], dtype=torch.int64)
    elapsed = time.perf_counter() - start
    bench = None
    if args.bench_steps:
        t0 = time.perf_counter()
        for _ in range(args.bench_steps):
            outs = method.execute(step_inputs(ids))
            position += 1
            for n in cache_names:
                state[n] = outs[outputs.index("output." + n)]
            ids = outs[logits_at][:, -1:].argmax(-1)
        bench = args.bench_steps / (time.perf_counter() - t0)
    if args.logits_out:
        np.save(args.logits_out, np.stack(last).astype(np.float32))
    pos = state.get("cache_position")
    print(json.dumps({
        "tokens": tokens,
        "executorch": version("executorch"),
        "cache_position": int(pos.reshape(-1)[0]) if pos is not None else -1,
        "tokens_per_s": args.steps / elapsed,
        "decode_tokens_per_s": bench,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
