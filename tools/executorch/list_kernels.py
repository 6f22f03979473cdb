#!/usr/bin/env python3
"""Prints the kernels ExecuTorch's portable runtime registers (the names a kernel mapping
in src/ingot/exporters/executorch/kernels_*.cpp may call), one per line.
Run with the reference venv."""
from executorch.extension.pybindings import portable_lib

for name in sorted(portable_lib._get_operator_names()):
    print(name)
