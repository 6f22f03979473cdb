"""torch tensors in and out without copies, checked in the reference venv (torch), which
the test venv does not have: torch_interop_check.py runs there with this ingot package."""

import os
import subprocess
from pathlib import Path

import pytest

import ingot
from conftest import LLAMA, REF_VENV


def test_torch_tensors_in_and_out_without_copies(tmp_path):
    py = REF_VENV / "bin" / "python"
    if not py.exists():
        pytest.skip(f"SKIP: the reference venv (torch) is absent ({REF_VENV}; tools/reference/setup-venv)")
    shim = tmp_path / "path"
    shim.mkdir()
    (shim / "ingot").symlink_to(Path(ingot.__file__).parent)  # only ingot, not this venv's numpy
    env = dict(os.environ, PYTHONPATH=str(shim))
    r = subprocess.run([str(py), str(Path(__file__).with_name("torch_interop_check.py")), str(LLAMA)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch interop OK" in r.stdout
