"""ingot.export / ExportedProgram / module() / save / load on the tiny Llama fixture,
checked against transformers' logits (float32; |got - want| <= 1e-4 + 1e-4 |want|) and
the eager forward; error mapping (ExportError with the guard text, ValueError, OSError)."""

import math

import numpy as np
import pytest

import ingot
from conftest import LLAMA, llama_reference

ATOL = RTOL = 1e-4


def _ids(batch, seq):
    return (np.arange(batch * seq, dtype=np.int64).reshape(batch, seq) * 7) % 90  # the fixture's vocabulary has 96 tokens


@pytest.fixture(scope="module")
def dynamic_ep(llama):
    seq = ingot.Dim("seq", min=1, max=64)
    return ingot.export(llama, kwargs={"input_ids": _ids(2, 8)},
                        dynamic_shapes={"input_ids": {0: ingot.Dim("batch", min=1, max=4), 1: seq}})


def test_from_pretrained_and_eager_forward_match_transformers(llama):
    assert llama.architecture == "LlamaForCausalLM" and llama.dtype == "float32"
    assert "input_ids" in llama.input_names
    inputs, want = llama_reference()
    got = llama(**inputs).logits
    np.testing.assert_allclose(got, want, atol=ATOL, rtol=RTOL)


def test_dim_repr_and_specials():
    assert repr(ingot.Dim("seq", min=1, max=2048)) == 'Dim("seq", min=1, max=2048)'
    assert repr(ingot.Dim.AUTO) == "Dim.AUTO" and repr(ingot.Dim.STATIC) == "Dim.STATIC"
    with pytest.raises(ValueError, match="max 1 is below min 2"):
        ingot.Dim("n", min=2, max=1)


def test_exported_program_shows_graph_signature_and_ranges(dynamic_ep):
    text = str(dynamic_ep)
    assert text == repr(dynamic_ep) == dynamic_ep._ep.print()
    assert "input_ids" in text and "seq" in text
    assert dynamic_ep.range_constraints["seq"] == ingot.ValueRange(1, 64)
    assert dynamic_ep.range_constraints["batch"] == ingot.ValueRange(1, 4)
    kinds = [s.kind for s in dynamic_ep.graph_signature.input_specs]
    assert "USER_INPUT" in kinds and "PARAMETER" in kinds
    assert [s.target for s in dynamic_ep.signature.input_specs if s.kind == "USER_INPUT"] == ["input_ids"]
    assert dynamic_ep.output_names == ["logits"]
    assert len(dynamic_ep.graph) == len(dynamic_ep.graph.nodes) > 10
    assert all(n["target"] for n in dynamic_ep.graph.nodes)
    assert "model.embed_tokens.weight" in dynamic_ep.state_dict
    assert dynamic_ep.ingot_version == ingot.__version__
    dynamic_ep.verify()


def test_module_runs_three_shapes_like_the_eager_forward(llama, dynamic_ep):
    mod = dynamic_ep.module()
    for batch, seq in ((1, 3), (2, 8), (4, 17)):
        ids = _ids(batch, seq)
        got = mod(input_ids=ids)
        assert got.logits.shape == (batch, seq, 256) or got.logits.shape[:2] == (batch, seq)
        np.testing.assert_allclose(got.logits, llama(input_ids=ids).logits, atol=ATOL, rtol=RTOL)
        np.testing.assert_array_equal(got[0], got["logits"])
    # positional inputs, and int32 ids converted
    np.testing.assert_array_equal(mod(_ids(1, 3)).logits, mod(input_ids=_ids(1, 3).astype(np.int32)).logits)


def test_module_matches_transformers_at_the_reference_shape(llama):
    inputs, want = llama_reference()
    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    ep = ingot.export(llama, (ids, mask), dynamic_shapes=({1: ingot.Dim.AUTO}, {1: ingot.Dim.AUTO}))
    np.testing.assert_allclose(ep.module()(input_ids=ids, attention_mask=mask).logits, want,
                               atol=ATOL, rtol=RTOL)


def test_save_and_load_round_trip(tmp_path, dynamic_ep):
    path = tmp_path / "llama.ingot"
    ingot.save(dynamic_ep, path)
    loaded = ingot.load(path)
    assert str(loaded) == str(dynamic_ep)
    name = "model.embed_tokens.weight"
    assert loaded._ep.state[name].is_mapped and not loaded.state_dict[name].flags.writeable
    ids = _ids(3, 5)
    np.testing.assert_array_equal(loaded.module()(input_ids=ids).logits,
                                  dynamic_ep.module()(input_ids=ids).logits)


def test_guard_the_spec_does_not_imply_raises_export_error(llama):
    # Two Dims for sizes the model needs equal: the guard text says to use one Dim.
    spec = {"input_ids": {1: ingot.Dim("seq")}, "attention_mask": {1: ingot.Dim("kv")}}
    with pytest.raises(ingot.ExportError, match="use the same Dim") as e:
        ingot.export(llama, kwargs={"input_ids": _ids(1, 6), "attention_mask": np.ones((1, 6), np.int64)},
                     dynamic_shapes=spec)
    assert isinstance(e.value, ValueError)
    assert "[export] the dynamic_shapes spec does not imply the guards" in str(e.value)


def test_bad_inputs_name_what_is_wrong(llama, dynamic_ep):
    mod = dynamic_ep.module()
    with pytest.raises(ValueError, match="no input named 'ids'"):
        mod(ids=_ids(1, 3))
    with pytest.raises(ValueError, match="missing input 'input_ids'"):
        mod()
    with pytest.raises(ValueError, match="input_ids"):
        mod(input_ids=_ids(5, 3))  # batch 5 is outside Dim("batch", max=4)
    with pytest.raises(ValueError, match="takes no input named 'pixel_values'"):
        ingot.export(llama, kwargs={"pixel_values": _ids(1, 3)})
    with pytest.raises(OSError, match="no-such-folder"):
        ingot.from_pretrained("/no-such-folder")
    with pytest.raises(TypeError, match="bfloat17"):
        ingot.from_pretrained(LLAMA, dtype="bfloat17")
