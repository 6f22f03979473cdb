#!/usr/bin/env python3
"""Writes the GGUF reader's fixtures under tests/fixtures/gguf/ with the `gguf` package
(pinned in requirements.txt, the same one llama.cpp's converter uses).

  <ref-venv python> tools/reference/make_gguf_fixtures.py

tensors.gguf   one [2, 256] tensor per ggml type ingot dequantises (F32, F16, BF16, Q8_0,
               Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), named after the type,
               plus metadata of every GGUF value type (the values below; the C++ test
               checks them) and general.alignment = 64.
<TYPE>.npy     the gguf package's own dequantisation of each tensor (float32, [2, 256]).

Types the package can quantise are quantised from random floats; the k-quants (which it
only dequantises) are random block bytes with their f16 scales set to finite values, so
every bit pattern of the quantised fields is exercised. The F16 tensor is random bits
except for NaNs (so subnormals and infinities appear). Deterministic (fixed seed).
"""
from __future__ import annotations

import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                   "gguf")
ROWS, COLS = 2, 256
# Byte offsets of the f16 scale fields in each k-quant block (ggml-common.h).
K_SCALE_FIELDS = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2],
                  T.Q6_K: [208]}


def finite_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.standard_normal(n) * 0.05).astype(np.float16)


def tensor_bytes(rng: np.random.Generator, qtype: T) -> np.ndarray:
    """[ROWS, bytes per row] uint8 for qtype."""
    floats = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    if qtype == T.F32:
        return floats.view(np.uint8)
    if qtype == T.F16:
        bits = rng.integers(0, 1 << 16, size=(ROWS, COLS), dtype=np.uint16)
        nan = ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
        bits[nan] &= 0xFC00  # NaN -> infinity
        return bits.view(np.uint8)
    if qtype in K_SCALE_FIELDS:
        block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
        n_blocks = ROWS * COLS // block_size
        blocks = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
        for off in K_SCALE_FIELDS[qtype]:
            blocks[:, off:off + 2] = finite_f16(rng, n_blocks).view(np.uint8).reshape(-1, 2)
        return blocks.reshape(ROWS, -1)
    return gguf.quantize(floats, qtype)


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(40)
    w = gguf.GGUFWriter(os.path.join(OUT, "tensors.gguf"), arch="ingot-test")
    w.add_custom_alignment(64)
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 0.125)
    w.add_uint64("test.u64", 1 << 40)
    w.add_int64("test.i64", -(1 << 40))
    w.add_float64("test.f64", -2.5)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo ▁world")
    w.add_array("test.strings", ["a", "", "ü€", "<|im_end|>"])
    w.add_array("test.ints", [1, -2, 3])
    w.add_array("test.floats", [0.5, -1.5])
    w.add_array("test.nested", [[1, 2], [3]])
    types = [T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q2_K, T.Q3_K,
             T.Q4_K, T.Q5_K, T.Q6_K]
    for qtype in types:
        if qtype == T.BF16:
            raw = gguf.quantize(rng.standard_normal((ROWS, COLS)).astype(np.float32), T.BF16)
        else:
            raw = tensor_bytes(rng, qtype)
        w.add_tensor(qtype.name, raw, raw_shape=None, raw_dtype=qtype)
        ref = gguf.dequantize(raw, qtype).astype(np.float32).reshape(ROWS, COLS)
        np.save(os.path.join(OUT, f"{qtype.name}.npy"), ref)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(OUT)


if __name__ == "__main__":
    main()
