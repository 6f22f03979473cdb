"""NumPy arrays in and out of ingot without copies (pointer identity), bfloat16 as uint16."""

import numpy as np
import pytest

import ingot
from conftest import LLAMA_BF16


def test_numpy_in_shares_memory():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    t = ingot.as_tensor(a)
    assert t.data_ptr == a.ctypes.data
    assert t.shape == [3, 4] and t.dtype == "int64" and t.writable


def test_numpy_out_shares_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = ingot.as_tensor(a)
    back = ingot.to_numpy(t)
    assert back.ctypes.data == t.data_ptr == a.ctypes.data
    back[1, 2] = 5.0
    assert a[1, 2] == 5.0


def test_transposed_array_is_wrapped_with_its_strides():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T  # [3, 2], strides (4, 12) bytes
    t = ingot.as_tensor(a)
    assert t.data_ptr == a.ctypes.data and t.strides == [1, 3]
    np.testing.assert_array_equal(ingot.to_numpy(t), a)


def test_reversed_array_is_copied_once():
    a = np.arange(5, dtype=np.float32)[::-1]  # a negative stride: ingot takes a copy
    t = ingot.as_tensor(a)
    assert t.data_ptr != a.ctypes.data
    np.testing.assert_array_equal(ingot.to_numpy(t), a)


def test_read_only_arrays_stay_read_only():
    a = np.ones(4, dtype=np.float32)
    a.flags.writeable = False
    t = ingot.as_tensor(a)
    assert not t.writable
    assert not ingot.to_numpy(t).flags.writeable


def test_bfloat16_is_a_uint16_view_or_ml_dtypes():
    bits = np.array([0x3F80, 0x4000], dtype=np.uint16)  # bf16 1.0, 2.0
    t = ingot.as_tensor(bits, dtype="bfloat16")
    assert t.dtype == "bfloat16" and t.data_ptr == bits.ctypes.data
    out = ingot.to_numpy(t)
    assert out.ctypes.data == bits.ctypes.data
    assert out.dtype.name in ("uint16", "bfloat16")
    np.testing.assert_array_equal(out.view(np.uint16), bits)


def test_mapped_bf16_weights_come_out_without_copies():
    ep = ingot.export(ingot.from_pretrained(LLAMA_BF16, dtype="bfloat16"),
                      kwargs={"input_ids": np.array([[1, 2, 3]], dtype=np.int64)})
    state = ep._ep.state
    name = next(k for k, t in state.items() if t.dtype == "bfloat16")
    view = ep.state_dict[name]
    assert view.ctypes.data == state[name].data_ptr
    assert view.dtype.name in ("uint16", "bfloat16") and not view.flags.writeable


def test_unsupported_dtype_names_it():
    with pytest.raises(TypeError, match="format 'I'"):
        ingot.as_tensor(np.zeros(2, dtype=np.uint32))


def test_static_cache_in_numpy_is_written_in_place(llama):
    # The prefill component mutates its cache inputs: the runtime writes into the caller's
    # NumPy arrays themselves (no copy in or out).
    from ingot.exporters import export_for_generation

    prefill = export_for_generation(llama, max_cache_len=16)["prefill"].program
    names = prefill.input_names
    cache = {n: np.zeros_like(a) for n, a in zip(names, prefill.example_inputs) if n != "input_ids"}
    ptrs = {n: a.ctypes.data for n, a in cache.items()}
    ids = np.array([[5, 6, 7, 8]], dtype=np.int64)
    prefill.module()(input_ids=ids, **cache)
    assert {n: a.ctypes.data for n, a in cache.items()} == ptrs
    assert int(cache["cache_position"].reshape(-1)[0]) == 4
    k = cache["key_cache.0"]  # [batch, kv heads, slots, head dim]: the 4 prompt slots are written
    assert np.count_nonzero(k[:, :, :4]) > 0 and np.count_nonzero(k[:, :, 4:]) == 0
