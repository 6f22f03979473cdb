#!/usr/bin/env python3
"""Reads one OpenVINO IR model, compiles it on CPU and runs it on several input cases.

  python run_cases.py MODEL.xml --case DIR [--case DIR ...] [--atol 1e-4] [--rtol 0]

Each case DIR holds in/<input name>.npy and want/<output name>.npy; want/state.<id>.npy
is the value a variable (ReadValue / Assign) must hold after the call. The model must
give every wanted output within |got - want| <= atol + rtol * |want| (shape and dtype
equal); a case DIR holding a file `refused` instead expects OpenVINO to refuse its
inputs (e.g. a size outside a Parameter's interval); where mask/<output name>.npy exists (a bool array over the output's leading
dims, e.g. [batch, seq]), only the positions it marks are compared (outputs at padded
positions are arbitrary). Each case runs on a fresh infer request (variables at their initial values).
Float32 inference is requested (INFERENCE_PRECISION_HINT f32). Prints one line per output
and case, then a JSON summary line {"ok": bool, "openvino": ..., "worst": {...}}; exit 0
when every case passed. Run with the venv of tools/openvino/setup-venv.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
import openvino as ov

from ov_common import compare, compile_cpu, drift  # same directory


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
    for w in drift():
        print(f"[run_cases] warning: {w} (tools/openvino/requirements.txt)", file=sys.stderr)
    try:
        model, compiled = compile_cpu(args.model)
    except Exception as e:  # noqa: BLE001 - a model OpenVINO refuses fails the run
        print(f"run_cases: {args.model}: read/compile FAILED: {e}")
        print(json.dumps({"ok": False, "openvino": ov.__version__}))
        return 1
    print(f"run_cases: {args.model}: openvino {ov.__version__} read + compiled on CPU")
    ok, worst = True, {}
    for case in args.case:
        feeds = load_dir(os.path.join(case, "in"))
        want = load_dir(os.path.join(case, "want"))
        masks = load_dir(os.path.join(case, "mask"))
        request = compiled.create_infer_request()
        refused = os.path.exists(os.path.join(case, "refused"))
        try:
            result = request.infer(feeds)
        except Exception as e:  # noqa: BLE001
            if refused:
                why = [line for line in str(e).splitlines() if "Check" in line] or [str(e)]
                print(f"  {os.path.basename(case)}: refused as expected: {why[0][:160]}")
                continue
            print(f"run_cases: {case}: infer FAILED: {e}")
            ok = False
            continue
        if refused:
            print(f"  {os.path.basename(case)}: FAILED: the inputs were not refused")
            ok = False
            continue
        got = {}
        for port, value in result.items():
            for name in port.get_names():
                got[name] = np.asarray(value)
        for state in request.query_state():
            got["state." + state.name] = np.array(state.state.data)
        for name, expected in want.items():
            if name not in got:
                print(f"  {case}: {name}: MISSING (outputs: {sorted(got)})")
                ok = False
                continue
            value = got[name]
            if name in masks and value.shape == expected.shape:
                m = masks[name].astype(bool)
                m = np.broadcast_to(m.reshape(m.shape + (1,) * (expected.ndim - m.ndim)), expected.shape)
                value, expected = value[m], expected[m]
            print(f"  {os.path.basename(case)}:", end="")
            ok = compare(name, value, expected, args.atol, args.rtol) and ok
            got[name] = value
            if got[name].shape == expected.shape and got[name].size and expected.dtype != np.bool_:
                diff = float(np.nanmax(np.abs(got[name].astype(np.float64) - expected.astype(np.float64))))
                worst[name] = max(worst.get(name, 0.0), diff)
    print(json.dumps({"ok": ok, "openvino": ov.__version__, "worst": worst}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
