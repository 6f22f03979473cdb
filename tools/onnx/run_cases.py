#!/usr/bin/env python3
"""Checks one ONNX model and runs it on several input cases with ONNX Runtime.

  python run_cases.py MODEL.onnx --case DIR [--case DIR ...] [--atol 1e-4] [--rtol 0]

Each case DIR holds in/<input name>.npy and want/<output name>.npy; the model must give
every wanted output within |got - want| <= atol + rtol * |want| (shape and dtype equal).
Inputs not given in a case use the model's default (an initializer of the same name).
The model is checked once with onnx.checker.check_model(full_check=True) and loaded once.
Prints one line per output and case, then a JSON summary line
{"ok": bool, "onnx": ..., "onnxruntime": ..., "worst": {output: max |diff|}}; exit 0 when
every case passed. Run with the venv of tools/onnx/setup-venv.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import onnx

from check_and_run import compare, session  # same directory


def load_dir(path: str) -> dict[str, np.ndarray]:
    if not os.path.isdir(path):
        return {}
    return {f[:-4]: np.load(os.path.join(path, f)) for f in sorted(os.listdir(path)) if f.endswith(".npy")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=0.0)
    args = ap.parse_args()
    import onnxruntime as ort

    try:
        onnx.checker.check_model(args.model, full_check=True)
    except Exception as e:  # noqa: BLE001 - any checker failure fails the run
        print(f"run_cases: {args.model}: check FAILED: {e}")
        print(json.dumps({"ok": False}))
        return 1
    print(f"run_cases: {args.model}: onnx {onnx.__version__} checker ok")
    sess = session(args.model)
    names = [o.name for o in sess.get_outputs()]
    ok, worst = True, {}
    for case in args.case:
        feeds = load_dir(os.path.join(case, "in"))
        want = load_dir(os.path.join(case, "want"))
        try:
            got = dict(zip(names, sess.run(names, feeds)))
        except Exception as e:  # noqa: BLE001
            print(f"run_cases: {case}: onnxruntime {ort.__version__} FAILED: {e}")
            ok = False
            continue
        for name, expected in want.items():
            if name not in got:
                print(f"  {case}: {name}: MISSING (outputs: {names})")
                ok = False
                continue
            print(f"  {os.path.basename(case)}:", end="")
            ok = compare(name, got[name], expected, args.atol, args.rtol) and ok
            if got[name].shape == expected.shape and got[name].size:
                diff = float(np.nanmax(np.abs(got[name].astype(np.float64) - expected.astype(np.float64))))
                worst[name] = max(worst.get(name, 0.0), diff)
    print(json.dumps({"ok": ok, "onnx": onnx.__version__, "onnxruntime": ort.__version__, "worst": worst}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
