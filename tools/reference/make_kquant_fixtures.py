#!/usr/bin/env python3
"""k-quant reference fixtures for tests/formats/ggml_quantize_test.cpp.

A small float32 implementation of the grid searches llama.cpp's k-quants use (as
ggml-quants.c describes them: the weighted affine search of Q4_K / Q5_K sub-blocks, the
weighted symmetric search of Q6_K and Q5_0 (affine for Q5_1), the weighted coding of sub-block scales
into 6 bits), written from the description and done scalar by scalar in numpy float32
in the order ingot's C++ (src/ingot/formats/ggml_fit.cpp, ggml_quantize.cpp) does them,
so both produce the same bits. The blocks are packed by the gguf package's layout
knowledge only through its dequantiser: each case also stores the dequantised values.

Inputs: rows of weights (Gaussian, heavy-tailed, a row with an all-zero super-block, a
row of one sign) and one importance vector. For each type and with / without the
importance it writes the block bytes:
  tests/fixtures/quant/kquant_x.npy            f32 [6, 512]
  tests/fixtures/quant/kquant_importance.npy   f32 [512]
  tests/fixtures/quant/kquant_<type>[_imatrix].npy   uint8 [6, row bytes]
Q8_0, Q5_0 and Q5_1 without importance come from the gguf package's quantize (llama.cpp's
reference quantisers); everything else from this file. Run in the reference venv:
  ~/.cache/ingot/ref-venv/bin/python tools/reference/make_kquant_fixtures.py
"""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "fixtures", "quant")
f32 = np.float32


def nearest(v) -> int:
    return int(np.rint(f32(v)))


def f16(v) -> np.float32:
    return f32(np.float16(f32(v)))


def f16_bytes(v) -> list[int]:
    return list(np.array([v], dtype=np.float32).astype(np.float16).view(np.uint8))


def affine(x, w, nmax, rmin, rdelta, steps):
    """(scale, min >= 0, levels): x ~ scale * L - min, searched candidates refit by
    weighted least squares."""
    n = len(x)
    lo, hi = x[0], x[0]
    sum_w = w[0]
    sum_x = f32(sum_w * x[0])
    for i in range(1, n):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
        sum_w = f32(sum_w + w[i])
        sum_x = f32(sum_x + f32(w[i] * x[i]))
    if lo > 0:
        lo = f32(0)
    if hi <= lo:
        return f32(0), f32(-lo), [0] * n
    inv = f32(f32(nmax) / f32(hi - lo))
    scale = f32(f32(1) / inv)
    offset = lo
    levels = [min(max(nearest(inv * f32(x[i] - lo)), 0), nmax) for i in range(n)]
    best = f32(0)
    for i in range(n):
        d = f32(f32(scale * f32(levels[i])) + lo) - x[i]
        best = f32(best + f32(w[i] * f32(d * d)))
    for s in range(steps + 1):
        inv = f32(f32(f32(rmin + f32(rdelta * f32(s))) + f32(nmax)) / f32(hi - offset))
        cand = []
        sum_l = sum_l2 = sum_xl = f32(0)
        for i in range(n):
            v = f32(inv * f32(x[i] - offset))
            l = nearest(min(v, f32(nmax))) if v > 0 else 0
            cand.append(l)
            wl = f32(w[i] * f32(l))
            sum_l = f32(sum_l + wl)
            sum_l2 = f32(sum_l2 + f32(wl * f32(l)))
            sum_xl = f32(sum_xl + f32(wl * x[i]))
        det = f32(f32(sum_w * sum_l2) - f32(sum_l * sum_l))
        if not det > 0:
            continue
        s_scale = f32(f32(f32(sum_w * sum_xl) - f32(sum_x * sum_l)) / det)
        s_min = f32(f32(f32(sum_l2 * sum_x) - f32(sum_l * sum_xl)) / det)
        if s_min > 0:
            s_min = f32(0)
            s_scale = f32(sum_xl / sum_l2)
        err = f32(0)
        for i in range(n):
            d = f32(f32(f32(s_scale * f32(cand[i])) + s_min) - x[i])
            err = f32(err + f32(w[i] * f32(d * d)))
        if err < best:
            levels, best, scale, offset = cand, err, s_scale, s_min
    return scale, f32(-offset), levels


def symmetric(x, nmax, w=None):
    """(scale, levels 0..2 nmax - 1): x ~ scale * (L - nmax)."""
    n = len(x)
    amax, peak = f32(0), f32(0)
    for v in x:
        if abs(v) > amax:
            amax, peak = f32(abs(v)), v
    if amax < f32(1e-15):
        return f32(0), [0] * n
    ws = [w[i] if w is not None else f32(x[i] * x[i]) for i in range(n)]

    def lv(inv, i):
        return min(max(nearest(f32(inv * x[i])), -nmax), nmax - 1)

    def sums(inv):
        slx = sl2 = f32(0)
        for i in range(n):
            l = f32(lv(inv, i))
            slx = f32(slx + f32(f32(ws[i] * x[i]) * l))
            sl2 = f32(sl2 + f32(f32(ws[i] * l) * l))
        return slx, sl2

    inv = f32(f32(-nmax) / peak)
    levels = [lv(inv, i) + nmax for i in range(n)]
    slx, sl2 = sums(inv)
    scale = f32(slx / sl2) if sl2 != 0 else f32(0)
    best = f32(scale * slx)
    for s in range(-9, 10):
        if s == 0:
            continue
        inv = f32(-f32(f32(nmax) + f32(f32(0.1) * f32(s))) / peak)
        slx, sl2 = sums(inv)
        if sl2 > 0 and f32(slx * slx) > f32(best * sl2):
            levels = [lv(inv, i) + nmax for i in range(n)]
            scale = f32(slx / sl2)
            best = f32(scale * slx)
    return scale, levels


def codes(x, nmax, w):
    """(scale, codes 0..nmax): non-negative x ~ scale * L, weighted."""
    n = len(x)
    hi = f32(0)
    for v in x:
        hi = max(hi, v)
    if hi < f32(1e-15):
        return f32(0), [0] * n
    inv = f32(f32(nmax) / hi)
    scale0 = f32(f32(1) / inv)
    best = f32(0)
    for i in range(n):
        d = f32(x[i] - f32(scale0 * f32(nearest(f32(inv * x[i])))))
        best = f32(best + f32(f32(w[i] * d) * d))
    for s in range(-4, 5):
        if s == 0:
            continue
        inv_s = f32(f32(f32(f32(0.1) * f32(s)) + f32(nmax)) / hi)
        scale_s = f32(f32(1) / inv_s)
        err = f32(0)
        for i in range(n):
            d = f32(x[i] - f32(scale_s * f32(min(nmax, nearest(f32(inv_s * x[i]))))))
            err = f32(err + f32(f32(w[i] * d) * d))
        if err < best:
            best, inv = err, inv_s
    L = []
    slx = sl2 = f32(0)
    for i in range(n):
        l = min(nmax, nearest(f32(inv * x[i])))
        L.append(l)
        slx = f32(slx + f32(f32(w[i] * x[i]) * f32(l)))
        sl2 = f32(sl2 + f32(f32(w[i] * f32(l)) * f32(l)))
    for _ in range(5):
        changed = 0
        for i in range(n):
            a = f32(slx - f32(f32(w[i] * x[i]) * f32(L[i])))
            b = f32(sl2 - f32(f32(w[i] * f32(L[i])) * f32(L[i])))
            if not (a > 0 and b > 0):
                continue
            l = min(nmax, nearest(f32(f32(x[i] * b) / a)))
            if l == L[i]:
                continue
            a = f32(a + f32(f32(w[i] * x[i]) * f32(l)))
            b = f32(b + f32(f32(w[i] * f32(l)) * f32(l)))
            if f32(f32(a * a) * sl2) > f32(f32(slx * slx) * b):
                L[i], slx, sl2 = l, a, b
                changed += 1
        if not changed:
            break
    return (f32(slx / sl2) if sl2 > 0 else f32(0)), L


# ── block packing (ggml-common.h's layouts) ──

def pack_k4_scales(sc, mn) -> list[int]:
    s = [0] * 12
    for j in range(4):
        s[j] = sc[j] & 63
        s[j + 4] = mn[j] & 63
    for j in range(4, 8):
        s[j + 4] = (sc[j] & 15) | ((mn[j] & 15) << 4)
        s[j - 4] |= ((sc[j] >> 4) & 3) << 6
        s[j] |= ((mn[j] >> 4) & 3) << 6
    return s


def k_nibbles(L) -> list[int]:
    out = []
    for j in range(0, 256, 64):
        out += [(L[j + l] & 15) | ((L[j + l + 32] & 15) << 4) for l in range(32)]
    return out


def k_affine_block(x, nmax, imp):
    """Q4_K (nmax 15) / Q5_K (nmax 31) super-block bytes."""
    L = [0] * 256
    scales, mins, sw = [], [], []
    if imp is not None:
        sum_x2 = f32(0)
        for v in x:
            sum_x2 = f32(sum_x2 + f32(v * v))
        sigma2 = f32(f32(f32(2) * sum_x2) / f32(256))
        for j in range(8):
            xj = x[32 * j:32 * j + 32]
            w = [f32(imp[32 * j + l] * np.sqrt(f32(sigma2 + f32(xj[l] * xj[l])))) for l in range(32)]
            s = f32(0)
            for v in w:
                s = f32(s + v)
            sw.append(s)
            sc, mn, lv = affine(xj, w, nmax, f32(-0.9), f32(0.05), 36)
            scales.append(sc), mins.append(mn)
            L[32 * j:32 * j + 32] = lv
        d, sc_codes = codes(scales, 63, sw)
        dmin, mn_codes = codes(mins, 63, sw)
    else:
        max_scale = max_min = f32(0)
        for j in range(8):
            xj = x[32 * j:32 * j + 32]
            sum_x2 = f32(0)
            for v in xj:
                sum_x2 = f32(sum_x2 + f32(v * v))
            av = np.sqrt(f32(sum_x2 / f32(32)))
            w = [f32(av + abs(v)) for v in xj]
            if nmax == 15:
                sc, mn, lv = affine(xj, w, nmax, f32(-1.0), f32(0.1), 20)
            else:
                sc, mn, lv = affine(xj, w, nmax, f32(-0.5), f32(0.1), 15)
            scales.append(sc), mins.append(mn)
            L[32 * j:32 * j + 32] = lv
            max_scale, max_min = max(max_scale, sc), max(max_min, mn)
        inv_s = f32(f32(63) / max_scale) if max_scale > 0 else f32(0)
        inv_m = f32(f32(63) / max_min) if max_min > 0 else f32(0)
        sc_codes = [min(max(nearest(f32(inv_s * v)), 0), 63) for v in scales]
        mn_codes = [min(max(nearest(f32(inv_m * v)), 0), 63) for v in mins]
        d, dmin = f32(max_scale / f32(63)), f32(max_min / f32(63))
    d16, dmin16 = f16(d), f16(dmin)
    for j in range(8):
        dj = f32(d16 * f32(sc_codes[j]))
        if dj == 0:
            continue
        mj = f32(dmin16 * f32(mn_codes[j]))
        for l in range(32):
            L[32 * j + l] = min(max(nearest(f32(f32(x[32 * j + l] + mj) / dj)), 0), nmax)
    out = f16_bytes(d) + f16_bytes(dmin) + pack_k4_scales(sc_codes, mn_codes)
    if nmax == 31:
        qh = [0] * 32
        for k in range(4):
            for l in range(32):
                qh[l] |= ((L[64 * k + l] >> 4) & 1) << (2 * k)
                qh[l] |= ((L[64 * k + l + 32] >> 4) & 1) << (2 * k + 1)
        out += qh
    return out + k_nibbles(L)


def q6_k_block(x, imp):
    L = [0] * 256
    scales = []
    max_abs, peak = f32(0), f32(0)
    for j in range(16):
        sc, lv = symmetric(x[16 * j:16 * j + 16], 32, None if imp is None else imp[16 * j:16 * j + 16])
        scales.append(sc)
        L[16 * j:16 * j + 16] = lv
        if abs(sc) > max_abs:
            max_abs, peak = f32(abs(sc)), sc
    if max_abs < f32(1e-15):
        return [0] * 210
    inv = f32(f32(-128) / peak)
    d = f32(f32(1) / inv)
    sc_codes = [min(127, nearest(f32(inv * v))) for v in scales]
    d16 = f16(d)
    for j in range(16):
        dj = f32(d16 * f32(sc_codes[j]))
        if dj == 0:
            continue
        for l in range(16):
            L[16 * j + l] = min(max(nearest(f32(x[16 * j + l] / dj)), -32), 31) + 32
    ql, qh = [0] * 128, [0] * 64
    for h in range(2):
        w = L[128 * h:128 * h + 128]
        for l in range(32):
            ql[64 * h + l] = (w[l] & 15) | ((w[l + 64] & 15) << 4)
            ql[64 * h + l + 32] = (w[l + 32] & 15) | ((w[l + 96] & 15) << 4)
            qh[32 * h + l] = (((w[l] >> 4) & 3) | (((w[l + 32] >> 4) & 3) << 2)
                              | (((w[l + 64] >> 4) & 3) << 4) | (((w[l + 96] >> 4) & 3) << 6))
    return ql + qh + [c & 0xFF for c in sc_codes] + f16_bytes(d)


def q5_0_row_imatrix(x, imp):
    sum_x2 = f32(0)
    for v in x:
        sum_x2 = f32(sum_x2 + f32(v * v))
    sigma2 = f32(sum_x2 / f32(len(x)))
    out = []
    for b in range(0, len(x), 32):
        xb = x[b:b + 32]
        w = [f32(imp[b + j] * np.sqrt(f32(sigma2 + f32(xb[j] * xb[j])))) for j in range(32)]
        d, L = symmetric(xb, 16, w)
        qh = 0
        for j in range(32):
            qh |= ((L[j] >> 4) & 1) << j
        out += f16_bytes(d) + list(np.array([qh], dtype="<u4").view(np.uint8))
        out += [(L[j] & 15) | ((L[j + 16] & 15) << 4) for j in range(16)]
    return out


def q5_1_row_imatrix(x, imp):
    sum_x2 = f32(0)
    for v in x:
        sum_x2 = f32(sum_x2 + f32(v * v))
    sigma2 = f32(sum_x2 / f32(len(x)))
    out = []
    for b in range(0, len(x), 32):
        xb = x[b:b + 32]
        w = [f32(imp[b + j] * np.sqrt(f32(sigma2 + f32(xb[j] * xb[j])))) for j in range(32)]
        d, mn, L = affine(xb, w, 31, f32(-0.9), f32(0.05), 36)
        qh = 0
        for j in range(32):
            qh |= ((L[j] >> 4) & 1) << j
        out += f16_bytes(d) + f16_bytes(-mn) + list(np.array([qh], dtype="<u4").view(np.uint8))
        out += [(L[j] & 15) | ((L[j + 16] & 15) << 4) for j in range(16)]
    return out


def row_bytes(kind, x, imp):
    if kind in ("q4_k", "q5_k"):
        nmax = 15 if kind == "q4_k" else 31
        return sum((k_affine_block(x[b:b + 256], nmax, None if imp is None else imp[b:b + 256])
                    for b in range(0, len(x), 256)), [])
    if kind == "q6_k":
        return sum((q6_k_block(x[b:b + 256], None if imp is None else imp[b:b + 256])
                    for b in range(0, len(x), 256)), [])
    if kind == "q5_0":
        return q5_0_row_imatrix(x, imp)
    if kind == "q5_1":
        return q5_1_row_imatrix(x, imp)
    raise ValueError(kind)


def main() -> None:
    rng = np.random.default_rng(40)
    cols = 512
    x = rng.standard_normal((6, cols)).astype(np.float32) * f32(0.02)
    x[1] = (rng.standard_t(3, cols) * 0.05).astype(np.float32)        # heavy tails
    x[2, :256] = 0                                                      # a zero super-block
    x[3] = np.abs(x[3]) + f32(0.01)                                     # one sign, min > 0
    x[4, ::7] *= f32(20)                                                # outliers
    x[5] = (rng.uniform(-1, 1, cols) ** 3).astype(np.float32)
    imp = (rng.gamma(0.5, 2.0, cols) + 1e-3).astype(np.float32)
    np.save(os.path.join(OUT, "kquant_x.npy"), x)
    np.save(os.path.join(OUT, "kquant_importance.npy"), imp)
    rows = [[f32(v) for v in r] for r in x]
    ivec = [f32(v) for v in imp]
    import gguf
    from gguf.quants import quantize
    T = gguf.GGMLQuantizationType
    for name, qt in (("q8_0", T.Q8_0), ("q5_0", T.Q5_0), ("q5_1", T.Q5_1)):
        np.save(os.path.join(OUT, f"kquant_{name}.npy"), np.asarray(quantize(x, qt), dtype=np.uint8))
    for kind in ("q4_k", "q5_k", "q6_k", "q5_0", "q5_1"):
        for suffix, iv in (("", None), ("_imatrix", ivec)):
            if kind in ("q5_0", "q5_1") and iv is None:
                continue
            out = np.array([row_bytes(kind, r, iv) for r in rows], dtype=np.uint8)
            np.save(os.path.join(OUT, f"kquant_{kind}{suffix}.npy"), out)
            print(kind + suffix, out.shape)


if __name__ == "__main__":
    main()
