"""ingot.exporters: configs from dicts, AutoExporter, the ONNX exporter (judged by ONNX
Runtime in its venv), generation components and their directory."""

import subprocess

import numpy as np
import pytest

import ingot
from ingot.exporters import (AutoExportConfig, AutoExporter, NativeExporter, OnnxConfig,
                             OnnxExporter, export_for_generation)
from conftest import BERT, REPO, llama_reference, ort_run


def test_auto_config_from_dict_picks_the_class_and_round_trips():
    c = AutoExportConfig.from_dict({"export_format": "onnx", "dynamic": True, "opset": 18})
    assert isinstance(c, OnnxConfig) and c.dynamic is True and c.opset == 18
    again = AutoExportConfig.from_dict(c.to_dict())
    assert again.to_dict() == c.to_dict()
    c.max_seq = 128
    assert c.max_seq == 128 and c.to_dict()["max_seq"] == 128


def test_config_errors_name_the_key_and_the_known_ones():
    with pytest.raises(ValueError, match="bogus"):
        AutoExportConfig.from_dict({"export_format": "bogus"})
    with pytest.raises(ValueError, match="no_such_key"):
        OnnxConfig(no_such_key=1)
    with pytest.raises(AttributeError, match="has no field 'nope'"):
        OnnxConfig().nope


def test_auto_exporter_from_config():
    e = AutoExporter.from_config(OnnxConfig(dynamic=True))
    assert isinstance(e, OnnxExporter) and e.backend == "onnx"
    assert NativeExporter().backend == "native"


def test_onnx_export_is_judged_by_onnx_runtime(tmp_path, llama, onnx_python):
    inputs, want = llama_reference()
    ids = inputs["input_ids"]
    artifact = OnnxExporter().export(llama, inputs, config=OnnxConfig(dynamic=True))
    assert artifact.format == "onnx" and artifact.program.output_names == ["logits"]
    path = tmp_path / "llama.onnx"
    artifact.save(path)
    full = ort_run(onnx_python, path, inputs, tmp_path)["logits"]
    np.testing.assert_allclose(full, want, atol=1e-4, rtol=1e-4)  # transformers' logits
    short = {n: a[:, :4] for n, a in inputs.items()}  # the dynamic seq dim at another length
    np.testing.assert_allclose(ort_run(onnx_python, path, short, tmp_path)["logits"],
                               llama(**short).logits, atol=1e-4, rtol=1e-4)


def test_openvino_export_is_judged_by_openvino(tmp_path, llama, ov_python):
    ids = np.array([[3, 14, 15, 92, 65, 35]], dtype=np.int64)
    inputs = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    artifact = AutoExporter.from_format("openvino").export(llama, inputs, dynamic=True)
    assert artifact.format == "openvino"
    artifact.save(tmp_path / "llama.xml")
    case = tmp_path / "case"
    (case / "in").mkdir(parents=True)
    (case / "want").mkdir()
    for n, a in inputs.items():
        np.save(case / "in" / f"{n}.npy", a)
    np.save(case / "want" / "logits.npy", llama(**inputs).logits)
    r = subprocess.run([str(ov_python), str(REPO / "tools/openvino/run_cases.py"), str(tmp_path / "llama.xml"),
                        "--case", str(case), "--atol", "1e-4", "--rtol", "1e-4"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_export_for_generation_returns_the_components(tmp_path, llama):
    comps = export_for_generation(llama, max_cache_len=32)
    assert sorted(comps) == ["decode", "prefill"] and comps.max_cache_len == 32
    assert all(a.format == "native" for a in comps.values())
    one = NativeExporter().export_for_generation(llama, max_cache_len=32, multi_token_decode=True)
    assert list(one) == ["decode"]
    comps.save(tmp_path / "gen")
    assert (tmp_path / "gen" / "manifest.json").is_file()
    a = ingot.Generator(comps).generate([1, 2, 3], max_new_tokens=5, ignore_eos=True)
    b = ingot.Generator(tmp_path / "gen").generate([1, 2, 3], max_new_tokens=5, ignore_eos=True)
    assert a.generated_ids == b.generated_ids and len(a.generated_ids) == 5


def test_encoder_generation_is_not_implemented():
    with pytest.raises(NotImplementedError):
        export_for_generation(ingot.from_pretrained(BERT))


def test_config_dynamic_shapes_take_dims(llama):
    config = ingot.exporters.NativeExportConfig(
        dynamic_shapes={"input_ids": {1: ingot.Dim("seq", min=1, max=32)}})
    assert config.dynamic_shapes == {"input_ids": {"1": {"name": "seq", "min": 1, "max": 32}}}
    ids = np.array([[1, 2, 3, 4, 5]], dtype=np.int64)
    ep = NativeExporter().export(llama, {"input_ids": ids}, config=config).program
    assert ep.range_constraints["seq"] == ingot.ValueRange(1, 32)
    np.testing.assert_allclose(ep.module()(input_ids=ids[:, :2]).logits, llama(input_ids=ids[:, :2]).logits,
                               atol=1e-4, rtol=1e-4)
