#!/usr/bin/env python3
"""Small torch.export archives that exercise single ATen ops, with torch's outputs.

Each family below is a module whose forward applies ops of torch's core ATen opset (and a
few training-dialect ops: outer, unbind, std, roll) to edge cases: negative operands of
remainder / fmod, broadcasting, empty dims, dtype promotion, int and bool dtypes,
duplicate indices for scatter_reduce, dim=-1. Every edge case is one output, so a test
failure names it (manifest "outputs" holds a label per output).

tests/fixtures/pt2_ops/<family>/ holds model.pt2 (training dialect), model_aten.pt2
(after run_decompositions(): core ATen), case<k>_<input>.npy, case<k>_out<j>.npy and
manifest.json {"inputs", "labels", "ops": the aten overloads of both graphs, "atol",
"rtol", "cases"}. tests/runtime/pt2_ops_test.cpp runs both archives in ingot and compares
float outputs within atol + rtol * |torch| (NaN where torch has NaN), integer and bool
outputs exactly. tools/reference/core_aten_coverage.py marks the ops listed as checked.

  $(tools/reference/setup-venv) tools/reference/make_pt2_op_fixtures.py [families...]
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "fixtures", "pt2_ops")

# Float outputs: |ingot - torch| <= ATOL + RTOL * |torch| (float32 rounding of ops that
# ingot computes in another order, e.g. var in two passes, prod over a different tree).
ATOL, RTOL = 1e-5, 1e-5


class Remainder(torch.nn.Module):
    def forward(self, x, y, i, j):
        return {
            "remainder_tensor_f32": torch.remainder(x, y),            # broadcast [4,5] % [5]
            "remainder_scalar_f32": torch.remainder(x, 1.5),
            "remainder_negative_scalar_f32": torch.remainder(x, -2.5),
            "remainder_tensor_i64": torch.remainder(i, j),            # negatives both sides
            "remainder_negative_scalar_i64": torch.remainder(i, -3),
            "remainder_i64_by_float_promotes": torch.remainder(i, 2.5),
            "remainder_i32_i64_promotes": torch.remainder(i.to(torch.int32), j),
            "mod_operator_f32": x % y,
            "fmod_tensor_f32": torch.fmod(x, y),
            "fmod_scalar_f32": torch.fmod(x, -1.5),
            "fmod_tensor_i64": torch.fmod(i, j),
            "fmod_scalar_i64": torch.fmod(i, 4),
            "remainder_empty": torch.remainder(x[:, :0], 2.0),
        }


class Bitwise(torch.nn.Module):
    def forward(self, i, j, m, n, u):
        return {
            "bitwise_not_i64": torch.bitwise_not(i),
            "bitwise_not_bool": ~m,
            "bitwise_not_u8": torch.bitwise_not(u),
            "bitwise_and_i64_i32": torch.bitwise_and(i, j),
            "bitwise_and_scalar": torch.bitwise_and(i, 6),
            "bitwise_or_tensor": torch.bitwise_or(i, j),
            "bitwise_or_scalar": i | 5,
            "bitwise_xor_tensor": torch.bitwise_xor(i, j),
            "bitwise_xor_scalar": torch.bitwise_xor(i, -2),
            "and_bool": m & n,
            "or_bool_broadcast": m | n[:1],
            "xor_bool": m ^ n,
            "logical_xor_mixed": torch.logical_xor(i, m),
            "logical_and_int": torch.logical_and(i, j),
            "logical_or_int": torch.logical_or(i, n),
        }


class UnaryFloat(torch.nn.Module):
    def forward(self, x, h, i):
        # x in (-1, 1); h half-steps for round's ties; i integers
        return {
            "asin": torch.asin(x), "acos": torch.acos(x), "atan": torch.atan(x * 4),
            "atanh": torch.atanh(x), "asinh": torch.asinh(x * 4), "acosh": torch.acosh(x.abs() + 1),
            "tan": torch.tan(x), "sinh": torch.sinh(x * 3), "cosh": torch.cosh(x * 3),
            "erf": torch.erf(x * 2), "expm1": torch.expm1(x), "log1p": torch.log1p(x.abs()),
            "log2": torch.log2(x.abs() + 0.1), "log10": torch.log10(x.abs() + 0.1),
            "erf_int_promotes": torch.erf(i),
            "ceil": torch.ceil(h), "floor": torch.floor(h), "trunc": torch.trunc(h),
            "round_half_even": torch.round(h), "sign": torch.sign(h), "sign_int": torch.sign(i),
            "round_int": torch.round(i), "floor_int": torch.floor(i),
            "isinf": torch.isinf(h / x.round()), "isnan": torch.isnan(h / x.round()),
        }


class BinaryFloat(torch.nn.Module):
    def forward(self, x, y, i, m):
        xn = torch.where(x > 0.5, torch.full_like(x, float("nan")), x)
        return {
            "atan2": torch.atan2(x, y), "atan2_int_promotes": torch.atan2(i, i.flip(0) + 1),
            "hypot": torch.hypot(x, y),
            "maximum_nan": torch.maximum(xn, y), "minimum_nan": torch.minimum(y, xn),
            "maximum_int_float": torch.maximum(i[:, :1], x), "minimum_bool": torch.minimum(m, m.flip(1)),
            "div_scalar_floor_int": torch.div(i, -3, rounding_mode="floor"),
            "div_scalar_trunc_f32": torch.div(x, 0.3, rounding_mode="trunc"),
            "pow_scalar_base": torch.pow(2.0, x), "pow_int_tensor": torch.pow(i.abs(), 2),
            "where_scalar_other": torch.where(m, x, 0.5),
            "clamp_min_tensor": torch.clamp(x, min=y), "clamp_int": torch.clamp(i, -2, 3),
            "hardtanh": F.hardtanh(x * 3), "leaky_relu": F.leaky_relu(x, 0.2), "elu": F.elu(x, 0.7),
        }


class Reductions(torch.nn.Module):
    def forward(self, x, i, m):
        values, indices = x.max(dim=-1)
        vmin, imin = torch.min(x, 0, keepdim=True)
        return {
            "prod_all": torch.prod(x), "prod_dim": torch.prod(x, -1), "prod_keepdim": torch.prod(x, 0, keepdim=True),
            "prod_int": torch.prod(i, 1), "prod_bool": torch.prod(m, 0),
            "var_default": torch.var(x), "var_dim_unbiased": torch.var(x, -1),
            "var_correction0_keepdim": torch.var(x, 0, correction=0, keepdim=True),
            "std_dims": torch.std(x, (0, 1)), "std_dim": torch.std(x, dim=-1, unbiased=False),
            "max_dim_values": values, "max_dim_indices": indices,
            "min_dim_values": vmin, "min_dim_indices": imin,
            "max_dim_int": torch.max(i, 1)[0], "argmax_ties": torch.argmax(i, -1),
            "amax_bool": torch.amax(m, 1), "cumsum_int": torch.cumsum(i, -1),
        }


class Scatter(torch.nn.Module):
    def forward(self, x, idx, src, i):
        # idx has duplicate indices along dim -1 and along dim 0
        out = {}
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include in (True, False):
                out[f"scatter_reduce_{reduce}_{'self' if include else 'noself'}"] = \
                    x.scatter_reduce(-1, idx, src, reduce, include_self=include)
        out["scatter_reduce_mean_int_floor"] = i.scatter_reduce(1, idx, (src * 10).long(), "mean")
        out["scatter_reduce_amax_dim0"] = x.scatter_reduce(0, idx[:2] % 3, src[:2], "amax", include_self=False)
        out["scatter_add"] = torch.scatter_add(x, 1, idx, src)
        out["scatter_add_int"] = torch.scatter_add(i, -1, idx, (src * 10).long())
        out["scatter_src"] = torch.scatter(x, 1, idx[:, :1], src[:, :1])
        out["scatter_value"] = torch.scatter(x, -1, idx[:, 1:2], -7.0)
        out["gather_dim_neg"] = torch.gather(x, -1, idx)
        out["index_select"] = torch.index_select(x, 1, idx[0])
        return out


class Shapes(torch.nn.Module):
    def forward(self, x, v, w, i):
        a, b, c = torch.unbind(x[:3], 0)
        first, _ = torch.unbind(x[:, :2], -1)
        return {
            "outer_f32": torch.outer(v, w), "outer_int_float_promotes": torch.outer(i[0], w),
            "outer_empty": torch.outer(v[:0], w),
            "unbind_0_a": a, "unbind_0_c": c, "unbind_neg1_first": first,
            "flip_neg": torch.flip(x, (-1,)), "flip_two": torch.flip(x, (0, 1)), "flip_int": torch.flip(i, (0,)),
            "roll_flat": torch.roll(x, 3), "roll_neg": torch.roll(x, -1, -1),
            "roll_two_dims": torch.roll(x, (2, -7), (0, 1)),
            "repeat": x.repeat(2, 1), "repeat_new_dims": v.repeat(2, 1, 3), "repeat_zero": w.repeat(0, 2),
            "pad_constant": F.pad(x, (1, 2), value=-1.5), "pad_two_dims": F.pad(x, (0, 1, 2, 0)),
            "pad_negative_crops": F.pad(x, (-1, 1, 0, -2)), "pad_int": F.pad(i, (2, 0), value=7),
            "permute_neg_dims": x[None].permute(-1, 0, -2), "expand_minus_one": v[:, None].expand(-1, 3),
            "fill": torch.fill(x, 2.5),
        }


class Extras(torch.nn.Module):
    """Training-dialect ops that run_decompositions() replaces (and cumprod)."""

    def forward(self, x, i, idx, src):
        xi = torch.where(x > 1.5, torch.full_like(x, float("-inf")), x)
        var, mean = torch.var_mean(x, -1, correction=0)
        return {
            "cumprod_f32": torch.cumprod(x, -1), "cumprod_int": torch.cumprod(i, 0),
            "clamp_min": torch.clamp_min(x, -0.5), "clamp_max_tensor": torch.clamp_max(x, x.flip(0)),
            "logsumexp": torch.logsumexp(x, -1), "logsumexp_inf_keepdim": torch.logsumexp(xi, 0, keepdim=True),
            "var_mean_var": var, "var_mean_mean": mean,
            "index_add_duplicates": x.index_add(0, idx, src, alpha=2.0),
            "index_add_int_dim1": i.index_add(1, idx[:2], i[:, :2]),
            "repeat_interleave_flat": torch.repeat_interleave(i[0], 2),
            "repeat_interleave_dim": x.repeat_interleave(3, dim=-1),
            "expand_as": x[:1].expand_as(x), "flatten": x[None].flatten(0, 1),
        }


class Pooling(torch.nn.Module):
    def forward(self, x):
        values, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return {
            "max_pool_indices_values": values, "max_pool_indices": indices,
            "max_pool_dilated": F.max_pool2d(x, 2, 1, 0, dilation=2),
            "avg_pool": F.avg_pool2d(x, 2), "avg_pool_pad_counted": F.avg_pool2d(x, 3, 2, 1),
            "avg_pool_pad_not_counted": F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
            "avg_pool_divisor": F.avg_pool2d(x, (2, 3), (1, 2), divisor_override=4),
            "adaptive_avg_divisible": F.adaptive_avg_pool2d(x, (3, 2)),
            "adaptive_avg_overlapping": F.adaptive_avg_pool2d(x, (4, 3)),
            "nearest_up": F.interpolate(x, size=(9, 7), mode="nearest"),
            "nearest_down": F.interpolate(x, size=(4, 3), mode="nearest"),
        }


class Vision(torch.nn.Module):
    """Normalisations and paddings of vision models (eval mode)."""

    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(4)
        self.gn = torch.nn.GroupNorm(2, 4)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.linspace(-1, 1, 4))
            self.bn.running_var.copy_(torch.linspace(0.5, 2, 4))
            self.bn.weight.copy_(torch.linspace(0.5, 1.5, 4))
            self.bn.bias.copy_(torch.linspace(-0.2, 0.2, 4))
            self.gn.weight.copy_(torch.linspace(1.5, 0.5, 4))
            self.gn.bias.copy_(torch.linspace(0.1, -0.1, 4))
        self.eval()

    def forward(self, x, s):
        return {
            "batch_norm_eval": self.bn(x), "group_norm": self.gn(x),
            "reflection_pad1d": F.pad(s, (2, 1), mode="reflect"),
            "reflection_pad2d": F.pad(x, (1, 2, 2, 0), mode="reflect"),
            "replication_pad1d": F.pad(s, (3, 0), mode="replicate"),
            "replication_pad2d": F.pad(x, (0, 2, 1, 1), mode="replicate"),
            "upsample_bilinear_size": F.interpolate(x, size=(6, 9), mode="bilinear"),
        }


def r(*shape, lo=-3.0, hi=3.0, g=None):
    return torch.rand(*shape, generator=g) * (hi - lo) + lo


def families():
    """name -> (module, input names, list of input tuples, dynamic_shapes or None).

    Each family draws from the generator seeded by its name (crc32), so adding a family
    leaves the others' committed inputs unchanged."""
    g = torch.Generator()
    seq = torch.export.Dim("seq", min=2, max=32)
    wide = torch.export.Dim("wide", min=3, max=32)  # shapes: slices up to 2 columns deep

    def ints(*shape, lo=-9, hi=10):
        return torch.randint(lo, hi, shape, generator=g)

    def nonzero_ints(*shape):
        t = ints(*shape, lo=-5, hi=6)
        return torch.where(t == 0, torch.ones_like(t), t)

    def halves(*shape):
        return torch.randint(-8, 9, shape, generator=g).float() / 2

    def idx(rows, cols, size):
        t = torch.randint(0, size, (rows, cols), generator=g)
        t[:, 1] = t[:, 0]  # a duplicate in every row
        return t

    entries = {
        "remainder": lambda: (Remainder(), ["x", "y", "i", "j"],
                      [(r(4, 5, g=g) * 3, r(5, g=g), ints(4, 5), nonzero_ints(5))],
                      None),
        "bitwise": lambda: (Bitwise(), ["i", "j", "m", "n", "u"],
                    [(ints(3, 4), ints(3, 4).to(torch.int32), ints(3, 4) > 0, ints(3, 4) > 0,
                      torch.randint(0, 255, (3, 4), generator=g).to(torch.uint8))],
                    None),
        "unary_float": lambda: (UnaryFloat(), ["x", "h", "i"],
                        [(r(3, n, lo=-0.95, hi=0.95, g=g), halves(3, n), ints(3, n)) for n in (6, 9)],
                        ({1: seq}, {1: seq}, {1: seq})),
        "binary_float": lambda: (BinaryFloat(), ["x", "y", "i", "m"],
                         [(r(4, n, lo=-1, hi=1, g=g), r(4, n, g=g), ints(4, n), ints(4, n) > 0) for n in (5, 8)],
                         ({1: seq}, {1: seq}, {1: seq}, {1: seq})),
        "reductions": lambda: (Reductions(), ["x", "i", "m"],
                       [(r(4, n, lo=0.5, hi=1.5, g=g), torch.tensor([[1, 3, 3, 0, 2, 3, 1, -2, 4][:n]] * 3),
                         ints(4, n) > -7) for n in (5, 9)],
                       (({1: seq}, {1: seq}, {1: seq}))),
        "scatter": lambda: (Scatter(), ["x", "idx", "src", "i"],
                    [(r(3, 6, g=g), idx(3, 4, 6), r(3, 4, g=g), ints(3, 6))],
                    None),
        "extras": lambda: (Extras(), ["x", "i", "idx", "src"],
                   [(r(3, 4, lo=-2, hi=2, g=g), ints(3, 4, lo=-3, hi=4), torch.tensor([2, 0, 2]),
                     r(3, 4, g=g))], None),
        "pooling": lambda: (Pooling(), ["x"], [(r(2, 3, 6, 8, g=g),)], None),
        "vision": lambda: (Vision(), ["x", "s"],
                   [(r(2, 4, 3, 5, g=g), r(2, 3, 6, g=g))], None),
        "shapes": lambda: (Shapes(), ["x", "v", "w", "i"],
                   [(r(4, n, g=g), r(4, g=g), r(3, g=g), ints(4, 3)) for n in (5, 7)],
                   ({1: wide}, None, None, None)),
    }
    out = {}
    for name, make in entries.items():
        g.manual_seed(zlib.crc32(name.encode()))
        out[name] = make()
    return out


def aten_ops(ep):
    ops = set()
    for node in ep.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) \
                and node.target.namespace == "aten":
            ops.add(f"{node.target._opname}.{node.target._overloadname}")
    return ops


def write_family(name, module, names, cases, dyn, out_dir):
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with torch.no_grad():
        ep = torch.export.export(module, cases[0], dynamic_shapes=dyn)
        ep_aten = ep.run_decompositions()
    # The per-node provenance (stack traces, from_node, torch_fn) is most of model.json
    # and the op tests do not read it: dropped to keep the archives small.
    for prog in (ep, ep_aten):
        for node in prog.graph.nodes:
            for key in ("stack_trace", "from_node", "torch_fn"):
                node.meta.pop(key, None)
    torch.export.save(ep, os.path.join(d, "model.pt2"))
    torch.export.save(ep_aten, os.path.join(d, "model_aten.pt2"))
    manifest = {"inputs": names, "labels": [], "ops": sorted(aten_ops(ep) | aten_ops(ep_aten)),
                "atol": ATOL, "rtol": RTOL, "cases": []}
    for k, args in enumerate(cases):
        case = {"inputs": {}, "outputs": []}
        for n, v in zip(names, args):
            np.save(os.path.join(d, f"case{k}_{n}.npy"), v.numpy())
            case["inputs"][n] = f"case{k}_{n}.npy"
        with torch.no_grad():
            want = module(*args)
            for prog in (ep, ep_aten):
                got = prog.module()(*args)
                for key in want:
                    if not torch.equal(torch.nan_to_num(got[key]), torch.nan_to_num(want[key])) and \
                            not torch.allclose(got[key], want[key], atol=ATOL, rtol=RTOL, equal_nan=True):
                        sys.exit(f"{name}.{key}: ep.module() differs from eager")
        manifest["labels"] = list(want)
        for j, key in enumerate(want):
            np.save(os.path.join(d, f"case{k}_out{j}.npy"), want[key].numpy())
            case["outputs"].append(f"case{k}_out{j}.npy")
        manifest["cases"].append(case)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
    print(f"{name}: {len(manifest['labels'])} outputs, {len(manifest['ops'])} ops, {size // 1024} KiB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("names", nargs="*")
    p.add_argument("--out", default=OUT)
    a = p.parse_args()
    torch.manual_seed(0)
    fams = families()
    for name in a.names or list(fams):
        module, names, cases, dyn = fams[name]
        write_family(name, module, names, cases, dyn, a.out)


if __name__ == "__main__":
    main()
