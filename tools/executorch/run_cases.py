#!/usr/bin/env python3
"""Loads one .pte with ExecuTorch's runtime and runs its "forward" on several input cases.

  python run_cases.py MODEL.pte --case DIR [--case DIR ...] [--atol 1e-4] [--rtol 0]

Each case DIR holds in/<k>_<name>.npy (the method's inputs, k = position) and
want/<k>_<name>.npy (expected outputs, k = output position); every wanted output must
match within |got - want| <= atol + rtol * |want|, shape and dtype equal. An optional
want/<k>_<name>.keep.npy (the attention mask, [batch, seq]) restricts the comparison to the
positions it keeps: outputs at padded query positions are not defined by transformers'
reference (a fully masked row), so they are left out there. The program is
loaded once (executorch.runtime.Runtime), a method once per case list.
Prints one line per output and case, then a JSON summary line
{"ok": bool, "executorch": version, "worst": {name: max |diff|}, "method": {...}}.
Run with the reference venv (tools/executorch/setup-venv).

  python run_cases.py --batch RUNS.json

runs several programs in one process (torch and the runtime imported once): RUNS.json is
a list of {"tag": name, "args": [the arguments above]}; the summary line is then
{"ok": all ok, "executorch": version, "runs": {tag: {"ok": bool, "worst": {...}}}}.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np


def load_dir(path: str) -> list[tuple[int, str, np.ndarray]]:
    if not os.path.isdir(path):
        return []
    out = []
    for f in os.listdir(path):
        if f.endswith(".npy"):
            k, name = f[:-4].split("_", 1)
            out.append((int(k), name, np.load(os.path.join(path, f))))
    return sorted(out, key=lambda t: t[0])


def version() -> str:
    from importlib.metadata import version as v

    return v("executorch")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("--method", default="forward")
    ap.add_argument("--batch", help="a JSON list of runs (see above)")
    return ap


def run(args) -> tuple[bool, dict]:
    """Loads args.model and runs its cases; returns (ok, worst |diff| per output)."""
    import torch
    from executorch.runtime import Runtime

    try:
        program = Runtime.get().load_program(args.model)
        method = program.load_method(args.method)
    except Exception as e:  # noqa: BLE001 - a program the runtime refuses fails the run
        print(f"run_cases: {args.model}: load FAILED: {e}")
        return False, {}
    meta = method.metadata
    print(f"run_cases: {args.model}: executorch {version()} loaded, {meta.num_inputs()} inputs, "
          f"{meta.num_outputs()} outputs")
    ok, worst = True, {}
    for case in args.case:
        # (np.ascontiguousarray would make a 0-d array 1-d)
        feeds = [torch.from_numpy(np.ascontiguousarray(x).reshape(x.shape)) for _, _, x in load_dir(os.path.join(case, "in"))]
        want = load_dir(os.path.join(case, "want"))
        try:
            got = method.execute(feeds)
        except Exception as e:  # noqa: BLE001
            print(f"run_cases: {case}: execute FAILED: {e}")
            for i, f in enumerate(feeds):
                m = meta.input_tensor_meta(i)
                print(f"    input {i}: fed {tuple(f.shape)} {f.dtype}; method {tuple(m.sizes())} {m.dtype()}")
            ok = False
            continue
        keeps = {name[: -len(".keep")]: x for _, name, x in want if name.endswith(".keep")}
        for k, name, expected in want:
            if name.endswith(".keep"):
                continue
            g = got[k].numpy() if hasattr(got[k], "numpy") else np.asarray(got[k])
            tag = f"  {os.path.basename(case)}: {name}"
            if g.shape != expected.shape or g.dtype != expected.dtype:
                print(f"{tag}: MISMATCH shape/dtype {g.shape} {g.dtype} vs {expected.shape} {expected.dtype}")
                ok = False
                continue
            if g.size == 0:
                print(f"{tag}: ok (empty)")
                continue
            d = np.abs(g.astype(np.float64) - expected.astype(np.float64))
            if name in keeps:  # padded positions (and everything after them) left out
                keep = keeps[name].astype(bool).reshape(keeps[name].shape + (1,) * (d.ndim - keeps[name].ndim))
                d = np.where(keep, d, 0.0)
            tol = args.atol + args.rtol * np.abs(expected.astype(np.float64))
            bad = ~(d <= tol)
            diff = float(np.nanmax(d)) if not np.isnan(d).all() else float("nan")
            worst[name] = max(worst.get(name, 0.0), diff)
            if bad.any():
                print(f"{tag}: FAIL max |diff| {diff:.3g} at {np.unravel_index(np.argmax(np.where(bad, d, -1)), d.shape)}")
                ok = False
            else:
                print(f"{tag}: ok max |diff| {diff:.3g} {tuple(g.shape)}")
    return ok, worst


def main() -> int:
    args = parser().parse_args()
    if args.batch:
        with open(args.batch) as f:
            runs = json.load(f)
        all_ok, results = True, {}
        for r in runs:
            ok, worst = run(parser().parse_args(r["args"]))
            results[r["tag"]] = {"ok": ok, "worst": worst}
            all_ok = all_ok and ok
        print(json.dumps({"ok": all_ok, "executorch": version(), "runs": results}))
        return 0 if all_ok else 1
    if not args.model:
        parser().error("a MODEL.pte (or --batch RUNS.json) is needed")
    ok, worst = run(args)
    print(json.dumps({"ok": ok, "executorch": version(), "worst": worst}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
