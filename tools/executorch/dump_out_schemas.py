#!/usr/bin/env python3
"""Prints the schema (argument order, defaults) of ATen `.out` kernels, the facts a kernel
mapping in src/ingot/exporters/executorch/kernels_*.cpp follows:

  python dump_out_schemas.py add.out view_copy.out native_layer_norm.out
Run with the reference venv (torch)."""
import sys

import torch

for spec in sys.argv[1:]:
    name, overload = spec.split(".", 1)
    print(getattr(getattr(torch.ops.aten, name), overload)._schema)
