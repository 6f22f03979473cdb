#!/usr/bin/env python3
"""Greedy decode loop over OpenVINO on an ingot decode model.

Stateful models (the default export) take input_ids, attention_mask, position_ids and
beam_idx, return logits, and keep the KV cache in variables across infer calls of one
infer request (OpenVINO GenAI's layout). Models exported with stateful=false take the
cache as input.<name> and return output.<name>, which this loop feeds back each step.

  python decode_loop.py MODEL.xml --prompt PROMPT.npy --steps N
         [--logits-out FILE.npy] [--bench-steps K]

Prints one JSON object: {"tokens": [...], "openvino": version, "drift": [...],
"stateful": bool, "decode_tokens_per_s": ...}. tokens are the prompt's continuation (N
tokens: the argmax after the prompt, then after each fed token). --logits-out saves the
last position's logits of every step as [N, vocab] float32. --bench-steps times K more
single-token steps after the loop. Run with the venv of tools/openvino/setup-venv.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import openvino as ov

from ov_common import compile_cpu, drift  # same directory

OV_TO_NUMPY = {"f32": np.float32, "f16": np.float16, "i64": np.int64, "i32": np.int32, "boolean": np.bool_}


class Decoder:
    def __init__(self, path: str):
        self.model, self.compiled = compile_cpu(path)
        self.request = self.compiled.create_infer_request()
        self.inputs = {i.get_any_name(): i for i in self.compiled.inputs}
        self.stateful = "beam_idx" in self.inputs
        self.cache = {}
        for name, port in self.inputs.items():
            if name.startswith("input."):
                shape = port.get_partial_shape()
                if shape.is_dynamic:
                    raise SystemExit(f"decode_loop: cache input {name} has a dynamic shape {shape}")
                self.cache[name] = np.zeros(shape.to_shape(), dtype=OV_TO_NUMPY[port.get_element_type().get_type_name()])
        self.past = 0
        self.request.reset_state()

    def step(self, ids: np.ndarray) -> np.ndarray:
        """Runs one call on ids [batch, tokens]; returns logits [batch, tokens, vocab]."""
        batch, tokens = ids.shape
        feeds = {"input_ids": np.ascontiguousarray(ids, dtype=np.int64)}
        if self.stateful:
            feeds["attention_mask"] = np.ones((batch, self.past + tokens), dtype=np.int64)
            feeds["position_ids"] = np.arange(self.past, self.past + tokens, dtype=np.int64)[None].repeat(batch, 0)
            feeds["beam_idx"] = np.arange(batch, dtype=np.int32)
        else:
            feeds.update(self.cache)
        result = self.request.infer(feeds)
        self.past += tokens
        out = {}
        for port, value in result.items():
            for name in port.get_names():
                out[name] = value
        for name in self.cache:
            self.cache[name] = np.array(out["output." + name[len("input."):]])
        return np.array(out["logits"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--prompt", required=True, help=".npy int64 [batch, prompt_len]")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--logits-out")
    ap.add_argument("--bench-steps", type=int, default=0)
    args = ap.parse_args()
    warnings = drift()
    for w in warnings:
        print(f"[decode_loop] warning: {w} (tools/openvino/requirements.txt)", file=sys.stderr)
    dec = Decoder(args.model)
    prompt = np.load(args.prompt).astype(np.int64)
    tokens, last_logits = [], []
    logits = dec.step(prompt)
    for i in range(args.steps):
        last = logits[:, -1, :]
        last_logits.append(last[0].astype(np.float32))
        nxt = last.argmax(-1)
        tokens.append(int(nxt[0]))
        if i + 1 < args.steps:
            logits = dec.step(nxt.reshape(-1, 1))
    rate = None
    if args.bench_steps > 0:
        ids = np.array([[tokens[-1]]], dtype=np.int64)
        start = time.perf_counter()
        for _ in range(args.bench_steps):
            dec.step(ids)
        rate = args.bench_steps / (time.perf_counter() - start)
    if args.logits_out:
        np.save(args.logits_out, np.stack(last_logits))
    print(json.dumps({"tokens": tokens, "openvino": ov.__version__, "drift": warnings,
                      "stateful": dec.stateful, "decode_tokens_per_s": rate}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
