#!/usr/bin/env python3
"""Benchmark: running the demo LM's decode program from Python vs the C++ CLI.

Run with the package's venv (tools/python/test installs it):
    ~/.cache/ingot/py-venv/bin/python tools/python/bench_decode.py [--rounds 15] [--tokens 200]

It exports assets/demo-lm for generation (prefill + decode, cache 256) into a temporary
directory once, then interleaves, per round:
  cli        `ingot generate DIR --input input_ids=P.npy --greedy --ignore-eos --json`: the C++ loop,
             its own decode_tokens_per_s (the anchor: what a user of the CLI gets)
  generator  ingot.Generator(DIR).generate(ids, do_sample=False, ignore_eos=True): the same C++ loop
             driven from Python (its decode_tokens_per_s)
  module     a Python loop calling the decode program (ingot.load(DIR/decode.ingot)
             .module()) once per token, the KV cache as NumPy arrays written in place,
             argmax in NumPy: every step crosses Python -> C++ -> Python (wall time)
and prints one JSON object: best tokens/s of each, the overheads vs the CLI
(1 - tps / cli_tps; the target is < 5%), and for the module loop the share of a step
spent in Python (outside the C++ run call; best round), which the machine's noise moves
much less than the wall-clock ratios. The greedy tokens of all three must be equal.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ingot
from ingot.exporters import export_for_generation

REPO = Path(__file__).resolve().parents[2]
PROMPT = "It is a truth universally acknowledged, that a single man in possession of a good fortune"


def run_cli(cli: Path, gen_dir: Path, prompt_npy: Path, tokens: int) -> dict:
    out = subprocess.run([str(cli), "generate", str(gen_dir), "--input", f"input_ids={prompt_npy}",
                          "--max-new-tokens", str(tokens), "--greedy", "--ignore-eos", "--json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


class TimedRun:
    """Wraps a module's C++ run() to sum the time spent inside it: the loop's time outside
    it is what Python adds per step (a figure the machine's noise affects much less than
    the ratio of two wall-clock rates)."""

    def __init__(self, inner):
        self.inner, self.seconds = inner, 0.0

    def run(self, inputs):
        t0 = time.perf_counter()
        out = self.inner.run(inputs)
        self.seconds += time.perf_counter() - t0
        return out

    def __getattr__(self, name):
        return getattr(self.inner, name)


class ModuleLoop:
    """Greedy decoding from Python: prefill program once, then the decode program per token."""

    def __init__(self, gen_dir: Path):
        self.prefill = ingot.load(gen_dir / "prefill.ingot")
        self.decode = ingot.load(gen_dir / "decode.ingot")
        self.pmod, self.dmod = self.prefill.module(), self.decode.module()
        names = self.decode.input_names
        examples = self.decode.example_inputs
        # The cache: the program's example cache inputs as zeroed NumPy arrays, wrapped once
        # so every call passes the very same tensors (the execution plan binds them).
        self.cache_np = {n: np.zeros_like(a) for n, a in zip(names, examples) if n != "input_ids"}
        self.cache = {n: ingot.as_tensor(a) for n, a in self.cache_np.items()}
        self.step = np.zeros((1, 1), dtype=np.int64)
        self.step_t = ingot.as_tensor(self.step)
        self.timed = TimedRun(self.dmod._mod)
        self.dmod._mod = self.timed
        self.python_fraction = 1.0  # best (lowest) share of a decode loop spent in Python

    def generate(self, ids: np.ndarray, tokens: int):
        for a in self.cache_np.values():
            a[...] = 0
        out = self.pmod(input_ids=ids, **self.cache)
        tok = int(out.logits[0, -1].argmax())
        del out
        generated = [tok]
        self.timed.seconds = 0.0
        t0 = time.perf_counter()
        for _ in range(tokens - 1):
            self.step[0, 0] = tok
            out = self.dmod(input_ids=self.step_t, **self.cache)
            tok = int(out.logits[0, -1].argmax())
            del out  # a held output would make the next call leave the plan
            generated.append(tok)
        dt = time.perf_counter() - t0
        self.python_fraction = min(self.python_fraction, 1 - self.timed.seconds / dt)
        self.python_us_per_step = (dt - self.timed.seconds) / (tokens - 1) * 1e6
        return generated, (tokens - 1) / dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--cli", default=str(REPO / "build" / "release" / "ingot"))
    a = ap.parse_args()
    cli = Path(a.cli)
    if not cli.is_file():
        print(f"SKIP: the C++ CLI is not built ({cli})", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = ingot.from_pretrained(REPO / "assets" / "demo-lm")
        export_for_generation(model, max_cache_len=256).save(tmp / "gen")
        gen = ingot.Generator(tmp / "gen")
        ids = np.array([gen.tokenizer.encode(PROMPT)], dtype=np.int64)
        np.save(tmp / "prompt.npy", ids)
        loop = ModuleLoop(tmp / "gen")
        best = {"cli": 0.0, "generator": 0.0, "module": 0.0}
        tokens = {}
        for _ in range(a.rounds):
            r = run_cli(cli, tmp / "gen", tmp / "prompt.npy", a.tokens)
            best["cli"] = max(best["cli"], r["decode_tokens_per_s"])
            tokens["cli"] = r["generated_ids"]
            g = gen.generate(ids, max_new_tokens=a.tokens, do_sample=False, ignore_eos=True)
            best["generator"] = max(best["generator"], g.decode_tokens_per_s)
            tokens["generator"] = g.generated_ids
            m_ids, m_tps = loop.generate(ids, a.tokens)
            best["module"] = max(best["module"], m_tps)
            tokens["module"] = m_ids
    same = tokens["cli"] == tokens["generator"] == tokens["module"]
    print(json.dumps({
        "benchmark": "demo-lm decode, greedy, cache 256",
        "prompt_tokens": int(ids.shape[1]), "new_tokens": a.tokens, "rounds": a.rounds,
        "decode_tokens_per_s": {k: round(v, 1) for k, v in best.items()},
        "overhead_vs_cli": {k: round(1 - best[k] / best["cli"], 4) for k in ("generator", "module")},
        "module_python_share_of_step": round(loop.python_fraction, 4),
        "module_python_us_per_step_last_round": round(loop.python_us_per_step, 1),
        "same_tokens": same,
    }, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
