"""INGOT_LLAMACPP_NO_EXTRA_BUFTS=1: llama.cpp loads weights without its extra CPU buffer
types (AMX tiles, repacked layouts), i.e. runs its plain CPU kernels.

A llama.cpp built with GGML_NATIVE on a CPU that reports AMX (a Sapphire Rapids VM) was
seen to segfault in llama_decode on every quantised file (Q4_0 and the k-quants alike)
while F32 files ran; with use_extra_bufts off the same files decode. Call
`apply(llama_cpp)` once after importing llama_cpp, before any Llama(...) is made.
"""
from __future__ import annotations

import os


def apply(llama_cpp) -> bool:
    """Patches llama_cpp's model defaults when the environment asks; True when it did."""
    if os.environ.get("INGOT_LLAMACPP_NO_EXTRA_BUFTS", "") in ("", "0"):
        return False
    inner = llama_cpp.llama_cpp
    original = inner.llama_model_default_params
    if getattr(original, "_ingot_no_extra_bufts", False):
        return True

    def defaults():
        p = original()
        p.use_extra_bufts = False
        return p

    defaults._ingot_no_extra_bufts = True
    inner.llama_model_default_params = defaults
    return True
