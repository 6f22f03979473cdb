#!/usr/bin/env python3
"""Greedy decode loop over ONNX Runtime on an ingot decode graph, cache bound in place.

The decode graph (ingot's export_for_generation) takes input_ids [batch, tokens] and the
static KV cache as input.<name> tensors (key_cache.N, value_cache.N, cache_position) and
returns logits plus the updated cache as output.<name>. Each output.<name> is bound to
the buffer of its input.<name> with IO binding, so the cache is read and written in place
across the loop (seed 003's zero-copy decode), and no step copies it.

  python decode_loop.py MODEL.onnx --prompt PROMPT.npy --steps N
         [--logits-out FILE.npy] [--bench-steps K]

The model is first checked with onnx.checker.check_model(full_check=True). Prints one
JSON object: {"tokens": [...], "onnx": version, "onnxruntime": version,
"drift": [...], "decode_tokens_per_s": ...}. tokens are the prompt's continuation (N
tokens: the argmax after the prompt, then after each fed token). --logits-out saves the
last position's logits of every step as [N, vocab] float32. --bench-steps times K more
single-token steps after the loop (cache position permitting) for the benchmark.
Run with the venv of tools/onnx/setup-venv.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

ORT_TO_NUMPY = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(bool)": np.bool_,
}


def pinned_versions() -> dict[str, str]:
    """The pins of tools/onnx/requirements.txt."""
    pins = {}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt")
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                pins[name.strip()] = version.strip()
    return pins


def drift() -> list[str]:
    found = {"onnx": onnx.__version__, "onnxruntime": ort.__version__, "numpy": np.__version__}
    out = []
    for tool, pin in pinned_versions().items():
        if tool in found and found[tool] != pin:
            out.append(f"{tool} {found[tool]} differs from the pinned {pin}")
    return out


class BoundDecoder:
    """One session whose cache inputs/outputs share buffers (numpy arrays, CPU)."""

    def __init__(self, path: str):
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.sess = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.cache = {}
        self.values = {}
        for i in self.sess.get_inputs():
            if not i.name.startswith("input."):
                continue
            if any(not isinstance(d, int) for d in i.shape):
                raise SystemExit(f"decode_loop: cache input {i.name} has a symbolic shape {i.shape}")
            array = np.zeros(i.shape, dtype=ORT_TO_NUMPY[i.type])
            self.cache[i.name] = array
            self.values[i.name] = ort.OrtValue.ortvalue_from_numpy(array)
        outputs = [o.name for o in self.sess.get_outputs()]
        for name in self.cache:
            pair = "output." + name[len("input."):]
            if pair not in outputs:
                raise SystemExit(f"decode_loop: {name} has no matching {pair} (outputs: {outputs})")
        self.logits_name = next(o for o in outputs if o.endswith("logits"))
        self.outputs = outputs

    def step(self, ids: np.ndarray) -> np.ndarray:
        """Runs one call on ids [batch, tokens]; returns logits [batch, tokens, vocab]."""
        binding = self.sess.io_binding()
        binding.bind_cpu_input("input_ids", np.ascontiguousarray(ids, dtype=np.int64))
        binding.bind_output(self.logits_name, "cpu")  # first bound: get_outputs()[0]
        for name, value in self.values.items():
            binding.bind_ortvalue_input(name, value)
            binding.bind_ortvalue_output("output." + name[len("input."):], value)
        self.sess.run_with_iobinding(binding)
        return binding.get_outputs()[0].numpy()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--prompt", required=True, help=".npy int64 [batch, prompt_len]")
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--logits-out")
    ap.add_argument("--bench-steps", type=int, default=0)
    args = ap.parse_args()

    for warning in drift():
        print(f"[decode_loop] warning: {warning} (tools/onnx/requirements.txt)", file=sys.stderr)
    onnx.checker.check_model(args.model, full_check=True)
    dec = BoundDecoder(args.model)
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
    result = {"tokens": tokens, "onnx": onnx.__version__, "onnxruntime": ort.__version__, "drift": drift(),
              "cache_position": int(dec.cache["input.cache_position"]) if "input.cache_position" in dec.cache
              else None}
    if args.logits_out:
        np.save(args.logits_out, np.stack(last_logits))
    if args.bench_steps > 0:
        ids = np.array([[tokens[-1]]], dtype=np.int64)
        start = time.perf_counter()
        for _ in range(args.bench_steps):
            dec.step(ids)
        elapsed = time.perf_counter() - start
        result["bench_steps"] = args.bench_steps
        result["decode_tokens_per_s"] = args.bench_steps / elapsed
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
