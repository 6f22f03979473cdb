"""Shared paths and helpers of the Python package tests.

Fixtures: the tiny Llama checkpoint tests/fixtures/models/llama (with transformers'
logits for its input_ids, tools/reference/make_model_fixtures.py) and the demo LM
assets/demo-lm (4 layers, with a tokenizer). Tools that judge results (the C++ CLI, the
ONNX venv, the reference venv) are optional: tests that need an absent one are skipped
with the reason, which `pytest -rs` prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
LLAMA = REPO / "tests" / "fixtures" / "models" / "llama"
BERT = REPO / "tests" / "fixtures" / "models" / "bert"
LLAMA_BF16 = REPO / "tests" / "fixtures" / "models" / "llama_llama3_rope_tied_bf16"
DEMO_LM = REPO / "assets" / "demo-lm"
ONNX_VENV = Path(os.environ.get("INGOT_ONNX_VENV", Path.home() / ".cache/ingot/onnx-venv"))
OV_VENV = Path(os.environ.get("INGOT_OV_VENV", Path.home() / ".cache/ingot/ov-venv"))
REF_VENV = Path(os.environ.get("INGOT_REF_VENV", Path.home() / ".cache/ingot/ref-venv"))


def cli_path() -> Path | None:
    """The C++ CLI: $INGOT_CLI, else the release build's."""
    p = Path(os.environ.get("INGOT_CLI", REPO / "build" / "release" / "ingot"))
    return p if p.is_file() and os.access(p, os.X_OK) else None


@pytest.fixture
def cli():
    p = cli_path()
    if p is None:
        pytest.skip("SKIP: the C++ CLI is not built (build/release/ingot; set INGOT_CLI)")

    def run(*args) -> str:
        r = subprocess.run([str(p), *map(str, args)], capture_output=True, text=True)
        assert r.returncode == 0, f"ingot {' '.join(map(str, args))} failed:\n{r.stderr}"
        return r.stdout

    return run


@pytest.fixture
def onnx_python():
    py = ONNX_VENV / "bin" / "python"
    if not py.exists():
        pytest.skip(f"SKIP: the ONNX venv is absent ({ONNX_VENV}; tools/onnx/setup-venv makes it)")
    return py


@pytest.fixture
def ov_python():
    py = OV_VENV / "bin" / "python"
    if not py.exists():
        pytest.skip(f"SKIP: the OpenVINO venv is absent ({OV_VENV}; tools/openvino/setup-venv makes it)")
    return py


def ort_run(onnx_python, model: Path, inputs: dict, tmp: Path) -> dict:
    """ONNX Runtime's outputs for `inputs` (tools/onnx/check_and_run.py: checker + run)."""
    args = [str(onnx_python), str(REPO / "tools/onnx/check_and_run.py"), str(model)]
    for name, arr in inputs.items():
        np.save(tmp / f"{name}.in.npy", arr)
        args += ["--input", f"{name}={tmp / (name + '.in.npy')}"]
    out = tmp / "ort-out"
    args += ["--output-dir", str(out)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return {p.stem: np.load(p) for p in out.glob("*.npy")}


@pytest.fixture(scope="session")
def llama():
    import ingot

    return ingot.from_pretrained(LLAMA)


@pytest.fixture(scope="session")
def demo_lm():
    import ingot

    return ingot.from_pretrained(DEMO_LM)


def llama_reference():
    """transformers' inputs ({"input_ids", "attention_mask"}: row 1 is padded) and logits
    for the Llama fixture (float32, eager attention)."""
    inputs = {n: np.load(LLAMA / f"{n}.npy") for n in ("input_ids", "attention_mask")}
    return inputs, np.load(LLAMA / "logits.npy")
