#!/usr/bin/env python3
"""ONNX Runtime GenAI as its users run it: its model builder's directory, its LLM client.

Run in the venv of tools/genai/setup-venv. Two steps:
 1. `--build`: if --out has no genai_config.json, its model builder converts the Hugging
    Face folder --hf at --precision (int4 | int8 | fp32) for the CPU execution provider
    with its defaults (`python -m onnxruntime_genai.models.builder -i HF -o OUT -p P -e
    cpu`), then sets the decoder session's intra-op threads to --threads (the only change:
    what a user sets to compare at a thread count).
 2. A line server on stdin / stdout, one JSON object per reply (the side-by-side harness
    interleaves it with ingot and llama.cpp):
      decode STEPS ID...   prefill the ids, then time STEPS decode steps (greedy):
                           {"tok_s": ..., "ids": [the STEPS + 1 tokens generated]}
      prefill ID...        time the prefill of the ids in a fresh generator: {"tok_s": ...}
      quit
The model is loaded once; every request uses a fresh og.Generator (a fresh cache).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def build(hf: str, out: str, precision: str, threads: int) -> None:
    config_path = os.path.join(out, "genai_config.json")
    if not os.path.exists(config_path):
        cache = out + ".cache"
        cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", hf, "-o", out,
               "-p", precision, "-e", "cpu", "-c", cache]
        log = out + ".build.log"
        print(f"# {' '.join(cmd)} (output in {log})", file=sys.stderr)
        with open(log, "w") as f:
            done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
        if done.returncode != 0 or not os.path.exists(config_path):
            with open(log) as f:
                tail = f.read()[-3000:]
            sys.exit(f"genai_decode: the model builder failed for {hf} at {precision}:\n{tail}")
    with open(config_path) as f:
        config = json.load(f)
    session = config["model"]["decoder"].setdefault("session_options", {})
    session["intra_op_num_threads"] = threads
    with open(config_path, "w") as f:
        json.dump(config, f, indent=4)


def serve(out: str) -> None:
    import onnxruntime_genai as og
    model = og.Model(out)

    def generator(max_length: int):
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=max_length, do_sample=False)
        return og.Generator(model, params)

    print(json.dumps({"onnxruntime_genai": og.__version__}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "decode":
            steps, ids = int(words[1]), [int(w) for w in words[2:]]
            g = generator(len(ids) + steps + 1)
            g.append_tokens(ids)
            g.generate_next_token()  # the first token, from the prefill's logits
            generated = [int(g.get_next_tokens()[0])]
            start = time.perf_counter()
            for _ in range(steps):  # each runs the model on the previous token
                g.generate_next_token()
                generated.append(int(g.get_next_tokens()[0]))
            seconds = time.perf_counter() - start
            reply = {"tok_s": steps / seconds, "ids": generated}
        elif words[0] == "prefill":
            ids = [int(w) for w in words[1:]]
            g = generator(len(ids) + 1)
            start = time.perf_counter()
            g.append_tokens(ids)
            reply = {"tok_s": len(ids) / (time.perf_counter() - start)}
        else:
            reply = {"error": f"unknown request '{words[0]}'"}
        print(json.dumps(reply), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hf", required=True, help="the Hugging Face folder")
    ap.add_argument("--out", required=True, help="the builder's output directory (reused)")
    ap.add_argument("--precision", required=True, choices=["int4", "int8", "fp32"])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    build(a.hf, a.out, a.precision, a.threads)
    serve(a.out)


if __name__ == "__main__":
    main()
