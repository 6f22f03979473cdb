#!/usr/bin/env python3
"""llama.cpp's own quantiser against a GGUF ingot quantised.

  python quantize_compare.py F32.gguf INGOT.gguf FTYPE

Quantises F32.gguf (a file ingot wrote with --outtype f32: the same weights, q / k rows
already permuted) with llama.cpp's llama_model_quantize (what `llama-quantize` runs, its
default parameters, no importance matrix) to llama_ftype FTYPE (15 Q4_K_M, 14 Q4_K_S,
18 Q6_K, 7 Q8_0), then compares it with INGOT.gguf (`ingot export --format gguf
--quantize q4_k_m --kquant-search llamacpp`) tensor by tensor with the gguf package's
reader: names, ggml types, and bytes.

Prints one JSON line: {"tensors", "types_differ": [[name, ingot, llama.cpp]...],
"bytes_identical", "bytes_differ": [[name, type, differing bytes]...], "file_type":
[ingot, llama.cpp]}. Run in the venv of tools/llamacpp/setup-venv.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile

import numpy as np


def main() -> None:
    f32, ingot, ftype = sys.argv[1], sys.argv[2], int(sys.argv[3])
    import gguf
    import llama_cpp
    out = os.path.join(tempfile.mkdtemp(prefix="ingot_quantize_compare_"), "llama.gguf")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    if llama_cpp.llama_model_quantize(f32.encode(), out.encode(), params) != 0:
        raise SystemExit(f"quantize_compare: llama_model_quantize {f32} (ftype {ftype}) failed")
    a, b = gguf.GGUFReader(ingot), gguf.GGUFReader(out)
    ta = {t.name: t for t in a.tensors}
    tb = {t.name: t for t in b.tensors}
    result = {"tensors": len(ta), "names_equal": set(ta) == set(tb), "types_differ": [],
              "bytes_identical": 0, "bytes_differ": []}
    for name in sorted(set(ta) & set(tb)):
        x, y = ta[name], tb[name]
        if x.tensor_type != y.tensor_type:
            result["types_differ"].append([name, x.tensor_type.name, y.tensor_type.name])
            continue
        bx = np.asarray(x.data).view(np.uint8).reshape(-1)
        by = np.asarray(y.data).view(np.uint8).reshape(-1)
        if bx.shape == by.shape and np.array_equal(bx, by):
            result["bytes_identical"] += 1
        else:
            n = int(np.count_nonzero(bx != by)) if bx.shape == by.shape else -1
            result["bytes_differ"].append([name, x.tensor_type.name, n])
    result["file_type"] = [int(a.fields["general.file_type"].parts[-1][0]),
                           int(b.fields["general.file_type"].parts[-1][0])]
    os.remove(out)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
