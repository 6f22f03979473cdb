"""NumPy / DLPack arrays <-> ingot tensors without copies.

In: a NumPy array is wrapped as-is (same memory) when its strides are non-negative
multiples of its item size; otherwise it is copied once with numpy.ascontiguousarray.
Anything with ``__dlpack__`` (a torch tensor on the CPU) goes through
``numpy.from_dlpack`` first, which shares its memory. bfloat16 arrives as an
``ml_dtypes.bfloat16`` array or a torch bfloat16 tensor and is passed as its uint16 bits.

Out: ``to_numpy`` returns a NumPy view of the tensor's memory that keeps it alive;
bfloat16 comes out as ``ml_dtypes.bfloat16`` when that package is installed, else as a
uint16 view of the bits (``arr.view(ml_dtypes.bfloat16)`` reads it later).
"""

from __future__ import annotations

import numpy as np

from . import _ingot

try:  # optional: the bfloat16 NumPy dtype
    import ml_dtypes as _ml_dtypes

    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the venv
    _ml_dtypes = None
    _BF16 = None


def _is_torch_bf16(x) -> bool:
    return type(x).__module__.startswith("torch") and str(getattr(x, "dtype", "")) == "torch.bfloat16"


def to_tensor(x, dtype: str | None = None) -> _ingot._Tensor:
    """An ingot tensor over x's memory (copies only when the layout does not allow it).
    dtype="bfloat16" reads a uint16 array as bfloat16 bits; another dtype converts (a copy)."""
    if isinstance(x, _ingot._Tensor):
        return x
    if dtype == "bfloat16":
        arr = np.asarray(x)
        if arr.dtype.itemsize != 2 or arr.dtype.kind not in "uV":
            raise TypeError(f"[ingot.as_tensor] dtype='bfloat16' takes uint16 bits or ml_dtypes.bfloat16, "
                            f"got {arr.dtype}")
        return _ingot._Tensor.from_buffer(_layout_ok(arr.view(np.uint16)), "bfloat16")
    if dtype is not None:
        return to_tensor(np.asarray(x, dtype=dtype))
    if _is_torch_bf16(x):
        import torch

        arr = np.from_dlpack(x.detach().view(torch.int16)).view(np.uint16)
        return _ingot._Tensor.from_buffer(_layout_ok(arr), "bfloat16")
    if not isinstance(x, np.ndarray) and hasattr(x, "__dlpack__"):
        x = np.from_dlpack(x)
    arr = np.asarray(x)
    if arr.dtype.name == "bfloat16":
        return _ingot._Tensor.from_buffer(_layout_ok(arr.view(np.uint16)), "bfloat16")
    return _ingot._Tensor.from_buffer(_layout_ok(arr))


def _layout_ok(arr: np.ndarray) -> np.ndarray:
    """arr itself when ingot can read its strides, else a contiguous copy."""
    item = arr.itemsize
    if all(s >= 0 and s % item == 0 for s in arr.strides) and arr.dtype.byteorder in "=<|":
        return arr
    return np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("=")))


def to_numpy(t: _ingot._Tensor) -> np.ndarray:
    """A NumPy view of t's memory (read-only for mapped weights); keeps t alive."""
    arr = np.asarray(t)
    if t.dtype == "bfloat16" and _BF16 is not None:
        return arr.view(_BF16)
    return arr


def tensors_in(inputs: dict) -> dict:
    return {name: to_tensor(v) for name, v in inputs.items()}


def tensors_out(tensors: dict) -> dict:
    return {name: to_numpy(t) for name, t in tensors.items()}
