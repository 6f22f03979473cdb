#!/usr/bin/env python3
"""Loads a .pt2 archive written by ingot with torch.export.load and runs its .module().

  python check_pt2.py MODEL.pt2 --case DIR [--case DIR ...] [--atol 1e-4]
  python check_pt2.py --pair MODEL.pt2 DIR [--pair MODEL2.pt2 DIR2 ...] [--atol 1e-4]

Each case DIR holds in/<k>_<name>.npy or in/<k>_<name>.json (a static value such as
use_cache=False: the module's positional arguments in order k) and/or
in/kw_<name>.npy|json (keyword arguments; null for None)
and want/<j>.npy (the flattened outputs, in order j). The module must give every output
within atol with the same shape. An optional DIR/positions.npy (a 0/1 mask over the
outputs' leading dims, e.g. an attention mask) limits the comparison to the positions it
marks: logits at padded positions whose every key is masked are implementation-defined
(ATen's CPU attention returns 0 there, transformers and ingot a uniform average). transformers is imported first when present, so a
ModelOutput in the archive's output spec is a known pytree type. Prints one line per
case, then a JSON summary {"ok": bool, "torch": version, "worst": max |diff|}; exit 0
when every case passed. Run with the reference venv (tools/reference/setup-venv).
"""
import argparse
import copy
import json
import os
import sys

import numpy as np
import torch

try:  # registers transformers' ModelOutput types with torch's pytree (at class creation)
    import transformers.modeling_outputs  # noqa: F401
    # and its custom ops (transformers.grouped_mm_fallback of the MoE experts)
    import transformers.integrations.moe  # noqa: F401
except ImportError:
    pass


def load(d, sort_key):
    if not os.path.isdir(d):
        return []
    return load_files(d, sorted((f for f in os.listdir(d) if f.endswith((".npy", ".json"))), key=sort_key))


def load_files(d, files):
    out = []
    for f in files:
        path = os.path.join(d, f)
        if f.endswith(".json"):
            with open(path) as fh:
                out.append(json.load(fh))
        else:
            out.append(torch.from_numpy(np.load(path)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--pair", nargs=2, action="append", default=[], metavar=("MODEL", "DIR"))
    ap.add_argument("--atol", type=float, default=1e-4)
    a = ap.parse_args()
    pairs = [(a.model, c) for c in a.case] + [tuple(p) for p in a.pair]
    ok, worst, loaded, errors = True, 0.0, {}, []
    for model, case in pairs:
        if model not in loaded:
            try:
                loaded[model] = torch.export.load(model)
            except Exception as e:  # noqa: BLE001 - any load failure fails the check
                print(f"check_pt2: torch.export.load({model}) FAILED: {type(e).__name__}: {e}")
                errors.append(f"{model}: {str(e)[:500]}")
                loaded[model] = None
        ep = loaded[model]
        if ep is None:
            ok = False
            continue
        ind = os.path.join(case, "in")
        names = sorted(f for f in os.listdir(ind) if f.endswith((".npy", ".json"))) if os.path.isdir(ind) else []
        kw_files = [f for f in names if f.startswith("kw_")]
        kwargs = {f[3:].rsplit(".", 1)[0]: v for f, v in zip(kw_files, load_files(ind, kw_files))}
        pos = sorted((f for f in names if not f.startswith("kw_")), key=lambda f: int(f.split("_")[0]))
        args = load_files(ind, pos)
        want = [w.numpy() for w in load(os.path.join(case, "want"), lambda f: int(f[:-4]))]
        try:
            with torch.no_grad():
                # A copy per case: the module's buffers share the program's state.
                out = copy.deepcopy(ep).module()(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            print(f"check_pt2: {case}: running the module FAILED: {type(e).__name__}: {e}")
            ok = False
            continue
        got = [x for x in torch.utils._pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]
        if len(got) != len(want):
            print(f"check_pt2: {case}: {len(got)} outputs, want {len(want)}")
            ok = False
            continue
        mask_file = os.path.join(case, "positions.npy")
        positions = np.load(mask_file).astype(bool) if os.path.exists(mask_file) else None
        for j, (g, w) in enumerate(zip(got, want)):
            g = g.detach().numpy()
            if g.shape != w.shape:
                print(f"check_pt2: {case}: output {j} shape {g.shape}, want {w.shape}")
                ok = False
                continue
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            if positions is not None and diff.shape[:positions.ndim] == positions.shape:
                diff = diff[positions]
            d = float(diff.max()) if diff.size else 0.0
            worst = max(worst, d)
            status = "ok" if d <= a.atol else "FAILED"
            ok = ok and d <= a.atol
            print(f"check_pt2: {case}: output {j} {tuple(g.shape)} max |diff| {d:.3g} {status}")
    print(json.dumps({"ok": ok, "torch": torch.__version__, "worst": worst, "errors": errors}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
