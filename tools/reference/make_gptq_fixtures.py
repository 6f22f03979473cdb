#!/usr/bin/env python3
"""GPTQ reference fixtures for tests/exporters/quantizer_methods_test.cpp.

A small numpy implementation of the published algorithm (Frantar et al., "GPTQ:
Accurate Post-Training Quantization for Generative Pre-trained Transformers", 2022,
Algorithm 1 with groups; act-order with static groups), in float64, quantising one weight
W [16, 64] against the Hessian of correlated inputs X [512, 64]. The group grid is the
round-to-nearest range rule of ingot's packed format (ops/cpu/quantize_pack.h):
symmetric 4-bit s = m / -8 (m the value of largest magnitude), 8-bit s = |m| / 127 per
row; with zero points s = (max - min) / 15 over the range widened to hold 0.

Writes tests/fixtures/quant/gptq_{w,h}.npy and gptq_<case>_{values,scales}.npy
(+ _zeros) for the cases below. Run with any Python that has numpy (the reference venv):
  ~/.cache/ingot/ref-venv/bin/python tools/reference/make_gptq_fixtures.py
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "quant")
DAMP = 0.01
# name -> (bits, group, zero_point, act_order)
CASES = {
    "int4_g32": (4, 32, False, False),
    "int4_g32_act_order": (4, 32, False, True),
    "int4_g32_zp": (4, 32, True, False),
    "int8": (8, 64, False, False),
}


def grid(values: np.ndarray, bits: int, zero_point: bool) -> tuple[float, int]:
    """(scale, zero) of one group by the range rule."""
    if bits == 8 or not zero_point:
        m = values[np.argmax(np.abs(values))]
        scale = abs(m) / 127.0 if bits == 8 else m / -8.0
        return (scale if scale != 0 else 1.0), 1 << (bits - 1)
    lo, hi = min(values.min(), 0.0), max(values.max(), 0.0)
    scale = (hi - lo) / 15.0
    if scale == 0:
        scale = 1.0
    return scale, int(np.clip(np.rint(-lo / scale), 0, 15))


def quantize(x: float, scale: float, zero: int, bits: int, zero_point: bool) -> int:
    lo = 1 if bits == 8 and not zero_point else 0
    return int(np.clip(np.rint(x / scale) + zero, lo, 255 if bits == 8 else 15))


def gptq(w: np.ndarray, h: np.ndarray, bits: int, group: int, zero_point: bool, act_order: bool):
    n, k = w.shape
    w = w.copy()
    h = h.copy()
    dead = np.diag(h) == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    order = np.argsort(-np.diag(h), kind="stable") if act_order else np.arange(k)
    h = h + DAMP * np.mean(np.diag(h)) * np.eye(k)
    hp = h[np.ix_(order, order)]
    u = np.linalg.cholesky(np.linalg.inv(hp)).T  # upper, H^-1 = U^T U
    groups = k // group
    scales = np.zeros((n, groups))
    zeros = np.zeros((n, groups), dtype=np.int64)
    if act_order:  # static groups: every grid from the original weights
        for r in range(n):
            for g in range(groups):
                scales[r, g], zeros[r, g] = grid(w[r, g * group:(g + 1) * group], bits, zero_point)
    values = np.zeros((n, k), dtype=np.int64)
    wp = w[:, order]
    for p in range(k):
        c = order[p]
        g = c // group
        for r in range(n):
            if not act_order and c % group == 0:
                scales[r, g], zeros[r, g] = grid(wp[r, p:p + group], bits, zero_point)
            q = quantize(wp[r, p], scales[r, g], zeros[r, g], bits, zero_point)
            values[r, c] = q
            err = (wp[r, p] - scales[r, g] * (q - zeros[r, g])) / u[p, p]
            wp[r, p + 1:] -= err * u[p, p + 1:]
    return values, scales, zeros


def main() -> None:
    rng = np.random.default_rng(7)
    n, k, t = 16, 64, 512
    w = rng.standard_normal((n, k)) * 0.05
    mix = rng.standard_normal((k, k)) / np.sqrt(k) + np.eye(k)
    x = rng.standard_normal((t, k)) @ mix * (1.0 + 4.0 * (rng.random(k) < 0.1))  # outliers
    x[:, 5] = 0.0  # a dead channel
    h = (x.T @ x / t).astype(np.float32)
    w = w.astype(np.float32)
    os.makedirs(OUT, exist_ok=True)
    np.save(os.path.join(OUT, "gptq_w.npy"), w)
    np.save(os.path.join(OUT, "gptq_h.npy"), h)
    for name, (bits, group, zp, act) in CASES.items():
        values, scales, zeros = gptq(w.astype(np.float64), h.astype(np.float64), bits, group, zp, act)
        np.save(os.path.join(OUT, f"gptq_{name}_values.npy"), values.astype(np.uint8))
        np.save(os.path.join(OUT, f"gptq_{name}_scales.npy"), scales.astype(np.float32))
        if zp:
            np.save(os.path.join(OUT, f"gptq_{name}_zeros.npy"), zeros.astype(np.uint8))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
