#!/usr/bin/env python3
"""Checks an ONNX model with the onnx checker and runs it with ONNX Runtime.

The judge of ingot's ONNX files (ingot wrote none of onnx or onnxruntime). Run with the
venv made by tools/onnx/setup-venv:

  python check_and_run.py MODEL.onnx [--input NAME=FILE.npy ...] [--output-dir DIR]
         [--expect NAME=FILE.npy ... --atol 1e-5 --rtol 0] [--roundtrip]
         [--io-binding [--share IN=OUT ...]] [--no-run]

Steps, in order:
  1. onnx.checker.check_model(path, full_check=True): structure, types, shape inference
     (the path form also checks external data).
  2. --roundtrip: onnx parses the file and serialises it back; the bytes must be equal
     (ingot's writer emits canonical protobuf).
  3. ONNX Runtime (CPU) runs the model on the .npy inputs. Outputs are written as
     DIR/<name>.npy and/or compared with --expect files: |got - want| <= atol + rtol*|want|.
  4. --io-binding runs through IOBinding instead of InferenceSession.run; each
     --share IN=OUT binds output OUT to input IN's buffer, so the output is written in
     place (the static KV cache's input.<name>/output.<name> pairs). The value written
     for OUT is then read back from IN's numpy array, which proves the update landed there.

Exit status 0 when every step passes, 1 otherwise (the reason is printed).
The functions check(), run() and run_bound() are importable for decode-loop scripts.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort


def check(path: str, roundtrip: bool = False) -> None:
    """Runs the full onnx checker; with roundtrip, also the byte-exact re-serialisation."""
    onnx.checker.check_model(path, full_check=True)
    if roundtrip:
        with open(path, "rb") as f:
            data = f.read()
        model = onnx.load_model_from_string(data)
        again = model.SerializeToString()
        if again != data:
            first = next((i for i, (a, b) in enumerate(zip(data, again)) if a != b),
                         min(len(data), len(again)))
            raise RuntimeError(f"roundtrip: onnx re-serialises {path} differently "
                               f"({len(data)} vs {len(again)} bytes, first difference at byte {first})")


def session(path: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def run(sess: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def run_bound(sess: ort.InferenceSession, feeds: dict[str, np.ndarray],
              shared: dict[str, str]) -> dict[str, np.ndarray]:
    """Runs through IOBinding. shared maps an input name to the output written into the
    same buffer; feeds[input] must be a C-contiguous array: it is updated in place."""
    binding = sess.io_binding()
    values = {}
    for name, array in feeds.items():
        if not array.flags["C_CONTIGUOUS"]:
            raise ValueError(f"io-binding: input '{name}' must be C-contiguous")
        values[name] = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_input(name, values[name])
    out_names = [o.name for o in sess.get_outputs()]
    for in_name, out_name in shared.items():
        if in_name not in values:
            raise ValueError(f"io-binding: --share input '{in_name}' is not fed")
        if out_name not in out_names:
            raise ValueError(f"io-binding: --share output '{out_name}' is not an output "
                             f"(outputs: {out_names})")
        binding.bind_ortvalue_output(out_name, values[in_name])
    bound_outputs = set(shared.values())
    for name in out_names:
        if name not in bound_outputs:
            binding.bind_output(name, "cpu")
    sess.run_with_iobinding(binding)
    result = dict(zip(out_names, binding.copy_outputs_to_cpu()))
    for in_name, out_name in shared.items():
        result[out_name] = feeds[in_name]  # the buffer the runtime wrote in place
    return result


def compare(name: str, got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> bool:
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f"  {name}: MISMATCH shape/dtype {got.shape} {got.dtype} vs expected "
              f"{want.shape} {want.dtype}")
        return False
    if got.size == 0:
        print(f"  {name}: ok (empty)")
        return True
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    err = np.abs(g - w)
    bad = ~(err <= atol + rtol * np.abs(w))
    bad &= ~(np.isnan(g) & np.isnan(w))
    worst = float(np.nanmax(err)) if err.size else 0.0
    if bad.any():
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, err, -1))),
                                                     got.shape))
        print(f"  {name}: MISMATCH max |diff| {worst:.3g} at {idx}: got {got[idx]} want {want[idx]}"
              f" (atol {atol}, rtol {rtol})")
        return False
    print(f"  {name}: ok, max |diff| {worst:.3g}")
    return True


def pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise SystemExit(f"check_and_run: {what} '{item}' is not NAME=VALUE")
        out[name] = value
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy")
    ap.add_argument("--expect", action="append", default=[], help="NAME=FILE.npy")
    ap.add_argument("--output-dir", help="write each output as DIR/<name>.npy")
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("--roundtrip", action="store_true",
                    help="require onnx to re-serialise the file to the same bytes")
    ap.add_argument("--io-binding", action="store_true")
    ap.add_argument("--share", action="append", default=[], help="IN=OUT (with --io-binding)")
    ap.add_argument("--no-run", action="store_true", help="only check")
    args = ap.parse_args()

    try:
        check(args.model, args.roundtrip)
    except Exception as e:  # noqa: BLE001 - report any checker failure as a failed check
        print(f"check_and_run: {args.model}: check FAILED: {e}")
        return 1
    print(f"check_and_run: {args.model}: onnx {onnx.__version__} checker ok"
          + (", byte-exact roundtrip ok" if args.roundtrip else ""))
    if args.no_run:
        return 0

    feeds = {name: np.load(path) for name, path in pairs(args.input, "--input").items()}
    shared = pairs(args.share, "--share")
    if shared and not args.io_binding:
        raise SystemExit("check_and_run: --share needs --io-binding")
    try:
        sess = session(args.model)
        outputs = run_bound(sess, feeds, shared) if args.io_binding else run(sess, feeds)
    except Exception as e:  # noqa: BLE001
        print(f"check_and_run: {args.model}: onnxruntime {ort.__version__} FAILED: {e}")
        return 1
    print(f"check_and_run: onnxruntime {ort.__version__} ran {len(outputs)} outputs"
          + (" with io-binding" if args.io_binding else ""))

    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for name, value in outputs.items():
            np.save(os.path.join(args.output_dir, name.replace("/", "_") + ".npy"), value)
    ok = True
    for name, path in pairs(args.expect, "--expect").items():
        if name not in outputs:
            print(f"  {name}: MISSING (outputs: {sorted(outputs)})")
            ok = False
            continue
        ok = compare(name, outputs[name], np.load(path), args.atol, args.rtol) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
