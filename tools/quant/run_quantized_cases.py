"""Runs a quantised ONNX or OpenVINO model on input / expected .npy cases (the layout of
tests/exporters/{ort,ov}_harness.h Cases) twice: in the runtime's exact mode and in its
default mode, and prints the worst differences of both. The exit status judges the
exact mode (|got - want| <= atol + rtol * |want|); the default mode is reported.

  exact mode, OpenVINO CPU: INFERENCE_PRECISION_HINT f32 and DYNAMIC_QUANTIZATION_GROUP_SIZE
    0 (by default the plugin quantises activations to int8 per group of 32 for compressed
    weights, which is faster and not exact);
  exact mode, ONNX Runtime: graph optimisations at ORT_ENABLE_BASIC (the default level
    fuses DequantizeLinear + MatMul into kernels that may quantise activations).

Usage (in the runtime's venv):
  python run_quantized_cases.py ov|ort MODEL --case DIR [--case DIR ...] [--atol A] [--rtol R]
"""
import argparse
import glob
import json
import os
import sys

import numpy as np


def load_dir(d):
    return {os.path.basename(p)[:-4]: np.load(p) for p in glob.glob(os.path.join(d, "*.npy"))}


def run_ov(model, feeds_list, exact):
    import openvino as ov
    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    if exact:
        config["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = "0"
    compiled = core.compile_model(core.read_model(model), "CPU", config)
    outs = []
    for feeds in feeds_list:
        result = compiled.create_infer_request().infer(feeds)
        outs.append({n: np.array(v) for port, v in result.items() for n in port.get_names()})
    return outs


def run_ort(model, feeds_list, exact):
    import onnxruntime as ort
    so = ort.SessionOptions()
    if exact:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    names = [o.name for o in s.get_outputs()]
    return [dict(zip(names, s.run(None, feeds))) for feeds in feeds_list]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runtime", choices=["ov", "ort"])
    ap.add_argument("model")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=1e-3)
    a = ap.parse_args()
    feeds = [load_dir(os.path.join(c, "in")) for c in a.case]
    wants = [load_dir(os.path.join(c, "want")) for c in a.case]
    run = run_ov if a.runtime == "ov" else run_ort
    summary = {"ok": True}
    for exact in (True, False):
        worst_abs, worst_rel, ok = 0.0, 0.0, True
        for got, want in zip(run(a.model, feeds, exact), wants):
            for name, w in want.items():
                g = got[name].astype(np.float64)
                d = np.abs(g - w)
                worst_abs = max(worst_abs, float(d.max()))
                worst_rel = max(worst_rel, float((d / np.maximum(np.abs(w), 1e-12)).max()))
                ok = ok and bool(np.all(d <= a.atol + a.rtol * np.abs(w)))
        mode = "exact" if exact else "default"
        print(f"run_quantized_cases: {a.runtime} {mode}: max |diff| {worst_abs:.3g}, "
              f"{'ok' if ok else 'MISMATCH'} (atol {a.atol}, rtol {a.rtol})")
        summary[mode] = {"max_abs": worst_abs, "within_tolerance": ok}
        if exact:
            summary["ok"] = ok
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
