#!/usr/bin/env python3
"""Which ops of torch's core ATen opset ingot's .pt2 reader can call.

The core ATen opset is every overload of torch.ops.aten tagged torch.Tag.core (the ops
run_decompositions() keeps; 189 overloads in torch 2.15). A few ops that are not core
but that programs of the training dialect (torch.export.export without
run_decompositions) carry are checked too (EXTRA below: outer, unbind, std, ...).

How ingot is asked: a tiny program (x.sin()) is exported and saved with torch, and its
models/model.json gets one extra node per op to check. ingot's reader checks every node's
target against its registry and adapters before it runs anything and lists the ones it
lacks in one error ("N op(s) in M node(s) are not supported by ingot: aten.x.y (x1),
..."), so one `ingot inspect` of that archive answers for every op at once. An op named
there is missing; any other op is callable by name. Whether its arguments and results
match torch's is what the op fixtures check (tools/reference/make_pt2_op_fixtures.py,
tests/runtime/pt2_ops_test.cpp); the report marks each op those fixtures cover.

  $(tools/reference/setup-venv) tools/reference/core_aten_coverage.py \
      [--ingot build/release/ingot] [--markdown] [--json OUT]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OP_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "pt2_ops")

# Not core ATen (run_decompositions() replaces them) but kept by the training dialect.
EXTRA = ["outer.default", "unbind.int", "std.correction", "std.dim", "roll.default",
         "hypot.default", "linear.default", "matmul.default", "layer_norm.default",
         "softmax.int", "log_softmax.int", "dropout.default", "diff.default",
         "contiguous.default", "floor_divide.default", "where.ScalarOther",
         "where.ScalarSelf", "__and__.Tensor", "__or__.Tensor", "__xor__.Tensor",
         "scaled_dot_product_attention.default", "silu.default", "type_as.default",
         "cumprod.default", "logsumexp.default", "var_mean.correction", "einsum.default",
         "index_add.default", "masked_fill.Scalar", "clamp_min.default", "clamp_max.default",
         "pad.default", "repeat_interleave.self_int", "expand_as.default", "flatten.using_ints"]

# Why an op ingot lacks is left out (the ones not named here: not done yet).
WHY_MISSING = {
    "backward": "a backward op (training); ingot runs inference programs",
    "random": "random numbers: no seeded equivalent of torch's generator",
    "strided": "takes explicit strides: ingot tensors in programs are logically contiguous",
    "pool": "3-d pooling and other vision / distance ops: not implemented yet",
    "fft": "FFT: not implemented yet",
}


def why(op):
    name, overload = op.split(".")
    if overload == "out":
        return "an out= variant: exported programs are functional and never call it"
    if name == "_native_batch_norm_legit":
        return "batch norm in training mode (updates the running statistics); export in eval mode"
    if name == "masked_scatter":
        return "not implemented yet (the number of source elements read depends on the mask)"
    if "backward" in name:
        return WHY_MISSING["backward"]
    if name in ("rand", "randn", "randperm", "native_dropout"):
        return WHY_MISSING["random"] if name != "native_dropout" else \
            "native_dropout: the mask output of training; export in eval mode"
    if name in ("as_strided", "empty_strided", "sym_stride", "sym_storage_offset", "diagonal"):
        return WHY_MISSING["strided"]
    if "pool" in name or "pad" in name or name in ("col2im", "grid_sampler_2d",
                                                   "upsample_nearest2d", "_cdist_forward",
                                                   "_pdist_forward", "_embedding_bag"):
        return WHY_MISSING["pool"]
    if "fft" in name:
        return WHY_MISSING["fft"]
    return "not implemented yet"


def core_ops():
    ops = []
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for overload in packet.overloads():
            if torch.Tag.core in getattr(packet, overload).tags:
                ops.append(f"{name}.{overload}")
    return sorted(ops)


class Tiny(torch.nn.Module):
    def forward(self, x):
        return x.sin()


def probe_archive(path, ops):
    """Saves Tiny's export to `path` with one extra node per op of `ops`."""
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.pt2")
        torch.export.save(torch.export.export(Tiny(), (torch.randn(2),)), base)
        with zipfile.ZipFile(base) as zin, zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                data = zin.read(info.filename)
                if info.filename.endswith("models/model.json"):
                    program = json.loads(data)
                    nodes = program["graph_module"]["graph"]["nodes"]
                    for op in ops:
                        nodes.append({"target": f"torch.ops.aten.{op}", "inputs": [],
                                      "outputs": [], "metadata": {}, "is_hop_single_tensor_return": None})
                    data = json.dumps(program).encode()
                zout.writestr(info.filename, data)


def missing_ops(ingot, ops):
    """The ops of `ops` ingot's reader refuses (by its one error listing them)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.pt2")
        probe_archive(path, ops)
        r = subprocess.run([ingot, "inspect", path], capture_output=True, text=True)
    if r.returncode == 0:
        return set()
    m = re.search(r"are not supported by ingot: (.*?)\. docs/pt2\.md", r.stderr)
    if not m:
        sys.exit(f"unexpected answer from {ingot} inspect:\n{r.stderr}")
    return {re.sub(r" \(x\d+\)$", "", part).removeprefix("aten.") for part in m.group(1).split(", ")}


def fixture_ops():
    """Ops the committed op fixtures check against torch (their manifests list them)."""
    tested = set()
    if os.path.isdir(OP_FIXTURES):
        for case in os.listdir(OP_FIXTURES):
            manifest = os.path.join(OP_FIXTURES, case, "manifest.json")
            if os.path.exists(manifest):
                with open(manifest) as f:
                    tested.update(json.load(f).get("ops", []))
    return tested


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ingot", default=os.path.join(ROOT, "build", "release", "ingot"))
    ap.add_argument("--markdown", action="store_true", help="print the lists for docs/pt2.md")
    ap.add_argument("--json", help="write {core, extra: {op: supported}} to this file")
    a = ap.parse_args()
    core = core_ops()
    extra = [op for op in EXTRA if op not in core]
    missing = missing_ops(a.ingot, core + extra)
    tested = fixture_ops()
    supported = [op for op in core if op not in missing]
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"torch": torch.__version__,
                       "core": {op: op not in missing for op in core},
                       "extra": {op: op not in missing for op in extra}}, f, indent=1)
    mark = lambda op: op + (" (t)" if op in tested else "")  # noqa: E731
    if a.markdown:
        print(f"Core ATen (torch {torch.__version__.split('+')[0]}): {len(supported)} of "
              f"{len(core)} overloads callable; (t): checked against torch by the op fixtures.\n")
        print("Callable: " + ", ".join(f"`{mark(op)}`" for op in supported) + ".\n")
        print("Missing:\n")
        by_reason = {}
        for op in core:
            if op in missing:
                by_reason.setdefault(why(op), []).append(op)
        for reason, ops in sorted(by_reason.items()):
            print(f"- {reason}: " + ", ".join(f"`{op}`" for op in ops))
        print("\nNot core, training dialect: callable " +
              ", ".join(f"`{mark(op)}`" for op in extra if op not in missing) +
              "; missing " + (", ".join(f"`{op}`" for op in extra if op in missing) or "none") + ".")
        return
    for op in core + extra:
        state = "missing" if op in missing else ("tested" if op in tested else "callable")
        print(f"{'core ' if op in core else 'extra'} {state:8} {op}")
    print(f"core ATen: {len(supported)} of {len(core)} callable, {len(core) - len(supported)} "
          f"missing; {len([op for op in core if op in tested])} checked by the op fixtures")


if __name__ == "__main__":
    main()
