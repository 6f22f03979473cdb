#!/usr/bin/env python3
"""GenAI decode tokens/s on several directories, interleaved, best of --rounds.

Run in the venv of tools/genai/setup-venv, on an otherwise idle machine:

  compare_decode.py --hf HF_FOLDER --steps 64 --rounds 3 NAME=DIR ...

Each round starts tools/genai/genai_decode.py on every DIR in turn (a fresh process: the
model loaded, the session's intra-op threads set to --threads) and asks it for one
`decode STEPS` of the prompt; the greedy ids of every directory must agree. The last
stdout line is JSON: {NAME: {"best_tok_s", "runs"}, "ids_equal": bool}.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


def one_run(hf: str, directory: str, threads: int, steps: int, ids: list[int]) -> dict:
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "genai_decode.py")
    p = subprocess.Popen([sys.executable, script, "--hf", hf, "--out", directory, "--precision",
                          "fp32", "--threads", str(threads)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    p.stdout.readline()  # the version line
    p.stdin.write(f"decode {steps} {' '.join(map(str, ids))}\nquit\n")
    p.stdin.flush()
    reply = json.loads(p.stdout.readline())
    p.wait()
    return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hf", required=True)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    # SmolLM2's tokens of "Once upon a time, in a small village": no eos in the first 64
    # greedy steps (genai_decode.py keeps stepping after an eos; on ingot's growing-cache
    # graph GenAI's next step then fails: its mask is one slot shorter than past + tokens).
    ap.add_argument("--ids", default="6403,1980,253,655,28,281,253,1165,6560", help="prompt ids")
    ap.add_argument("dirs", nargs="+", help="NAME=DIR")
    a = ap.parse_args()
    ids = [int(t) for t in a.ids.split(",")]
    named = [d.split("=", 1) for d in a.dirs]
    runs: dict[str, list[float]] = {n: [] for n, _ in named}
    seqs: dict[str, list[int]] = {}
    for _ in range(a.rounds):
        for name, directory in named:
            r = one_run(a.hf, directory, a.threads, a.steps, ids)
            runs[name].append(r["tok_s"])
            seqs[name] = r["ids"]
            print(f"# {name}: {r['tok_s']:.1f} tok/s", file=sys.stderr)
    out = {n: {"best_tok_s": max(v), "runs": v} for n, v in runs.items()}
    out["ids_equal"] = len({tuple(s) for s in seqs.values()}) == 1
    print(json.dumps(out))


if __name__ == "__main__":
    main()
