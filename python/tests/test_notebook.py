"""The notebook walkthrough of docs/python.md, end to end on the demo LM: load -> export
with a dynamic seq dim -> run at 3 shapes, equal to the C++ CLI's `ingot run` of the
saved program (and close to its eager forward) -> ONNX (judged by ONNX Runtime) ->
a generation directory -> generate, equal to `ingot generate DIR --json`."""

import json

import numpy as np
import pytest

import ingot
from ingot.exporters import OnnxConfig, OnnxExporter, export_for_generation
from conftest import DEMO_LM, ort_run

SHAPES = (1, 7, 33)  # seq lengths, batch 1


def _ids(seq):
    return ((np.arange(seq, dtype=np.int64) * 31 + 5) % 1000).reshape(1, seq)


@pytest.fixture(scope="module")
def exported(demo_lm):
    return ingot.export(demo_lm, kwargs={"input_ids": _ids(8)},
                        dynamic_shapes={"input_ids": {1: ingot.Dim("seq", min=1, max=256)}})


def test_export_and_run_at_three_shapes_like_the_cli(tmp_path, cli, demo_lm, exported):
    assert "seq" in str(exported) and exported.range_constraints["seq"] == ingot.ValueRange(1, 256)
    path = tmp_path / "demo.ingot"
    ingot.save(exported, path)
    mod = exported.module()
    for seq in SHAPES:
        ids = _ids(seq)
        np.save(tmp_path / "ids.npy", ids)
        got = mod(input_ids=ids).logits
        assert got.shape[:2] == (1, seq)
        cli("run", path, "--input", f"input_ids={tmp_path / 'ids.npy'}", "-o", tmp_path / f"p{seq}")
        np.testing.assert_array_equal(got, np.load(tmp_path / f"p{seq}" / "logits.npy"))  # same runtime
        cli("run", DEMO_LM, "--input", f"input_ids={tmp_path / 'ids.npy'}", "-o", tmp_path / f"e{seq}")
        np.testing.assert_allclose(got, np.load(tmp_path / f"e{seq}" / "logits.npy"), atol=1e-4, rtol=1e-4)


def test_onnx_of_the_demo_lm_runs_in_onnx_runtime(tmp_path, demo_lm, exported, onnx_python):
    path = tmp_path / "demo.onnx"
    OnnxExporter().export(demo_lm, {"input_ids": _ids(8)}, config=OnnxConfig(dynamic=True)).save(path)
    mod = exported.module()
    for seq in (3, 12):
        got = ort_run(onnx_python, path, {"input_ids": _ids(seq)}, tmp_path)["logits"]
        np.testing.assert_allclose(got, mod(input_ids=_ids(seq)).logits, atol=1e-4, rtol=1e-4)


def test_generation_directory_generates_like_the_cli(tmp_path, cli, demo_lm):
    comps = export_for_generation(demo_lm, max_cache_len=128)
    comps.save(tmp_path / "gen")
    prompt = "Mr. Darcy"
    out = ingot.Generator(tmp_path / "gen").generate(prompt, max_new_tokens=10)
    ref = json.loads(cli("generate", tmp_path / "gen", "--prompt", prompt, "--max-new-tokens", 10, "--json"))
    assert out.generated_ids == ref["generated_ids"] and out.text == ref["text"]
    assert out.stop_reason == ref["stop_reason"]
