"""Shared helpers of the OpenVINO judges: pinned versions, drift, the CPU core.

OpenVINO's CPU plugin runs float32 models in bfloat16 on CPUs with AMX / AVX512-BF16
unless told otherwise; the judges compare float32 results, so every compile asks for
INFERENCE_PRECISION_HINT f32 (PRECISION below).
"""
from __future__ import annotations

import os

import numpy as np
import openvino as ov

PRECISION = {"INFERENCE_PRECISION_HINT": "f32"}


def pinned_versions() -> dict[str, str]:
    """The pins of tools/openvino/requirements.txt."""
    pins = {}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt")
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                pins[name.strip()] = version.strip()
    return pins


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("openvino", "openvino-genai", "openvino-tokenizers", "numpy")}


def drift() -> list[str]:
    found = versions()
    return [f"{t} {found[t]} differs from the pinned {p}" for t, p in pinned_versions().items()
            if t in found and found[t] != p]


def compile_cpu(xml: str):
    core = ov.Core()
    model = core.read_model(xml)
    return model, core.compile_model(model, "CPU", PRECISION)


def compare(name: str, got: np.ndarray, want: np.ndarray, atol: float, rtol: float) -> bool:
    """Prints one line; True when shapes and dtypes match and values are within tolerance."""
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f" {name}: FAILED shape/dtype {got.shape} {got.dtype} vs {want.shape} {want.dtype}")
        return False
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        ok = bool(np.array_equal(got, want))
        print(f" {name}: {'ok' if ok else 'FAILED'} (exact)")
        return ok
    g, w = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(g - w)
    bound = atol + rtol * np.abs(w)
    # inf where torch has the same inf, NaN where torch has NaN
    same_nonfinite = (~np.isfinite(w)) & ((g == w) | (np.isnan(g) & np.isnan(w)))
    ok = bool(np.all((diff <= bound) | same_nonfinite))
    worst = float(np.nanmax(np.where(same_nonfinite, 0, diff))) if diff.size else 0.0
    print(f" {name}: {'ok' if ok else 'FAILED'} max|diff| {worst:.3g}")
    return ok
