#include "ingot/formats/ggml_fit.h"

#include <algorithm>
#include <cmath>

namespace ingot::formats::fit {

int nearest(float v) {
  return int(std::nearbyint(v));
}

float affine(int n, int nmax, const float* x, const float* w, uint8_t* L, float* min_out,
             float rmin, float rdelta, int steps) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi <= lo) {
    std::fill(L, L + n, uint8_t(0));
    *min_out = -lo;
    return 0.f;
  }
  // The plain map of [lo, hi] onto 0..nmax.
  float inv = float(nmax) / (hi - lo);
  float scale = 1 / inv, offset = lo;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    L[i] = uint8_t(std::clamp(nearest(inv * (x[i] - lo)), 0, nmax));
    const float d = scale * float(L[i]) + lo - x[i];
    best += w[i] * (d * d);
  }
  uint8_t cand[256];
  for (int s = 0; s <= steps; ++s) {
    inv = (rmin + rdelta * float(s) + float(nmax)) / (hi - offset);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const float v = inv * (x[i] - offset);
      const int l = v > 0 ? nearest(std::min(v, float(nmax))) : 0;
      cand[i] = uint8_t(l);
      sum_l += w[i] * float(l);
      sum_l2 += w[i] * float(l) * float(l);
      sum_xl += w[i] * float(l) * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float s_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
    float s_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
    if (s_min > 0) {
      s_min = 0;
      s_scale = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float d = s_scale * float(cand[i]) + s_min - x[i];
      err += w[i] * (d * d);
    }
    if (err < best) {
      std::copy(cand, cand + n, L);
      best = err;
      scale = s_scale;
      offset = s_min;
    }
  }
  *min_out = -offset;
  return scale;
}

float symmetric(int n, int nmax, const float* x, uint8_t* L, const float* w) {
  float amax = 0, peak = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      peak = x[i];
    }
  }
  if (amax < 1e-15f) {
    std::fill(L, L + n, uint8_t(0));
    return 0.f;
  }
  auto weight = [&](int i) { return w ? w[i] : x[i] * x[i]; };
  auto level = [&](float inv, int i) { return std::clamp(nearest(inv * x[i]), -nmax, nmax - 1); };
  float inv = float(-nmax) / peak;
  float sum_lx = 0, sum_l2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(inv, i);
    L[i] = uint8_t(l + nmax);
    sum_lx += weight(i) * x[i] * float(l);
    sum_l2 += weight(i) * float(l) * float(l);
  }
  float scale = sum_l2 != 0 ? sum_lx / sum_l2 : 0.f;
  float best = scale * sum_lx;
  for (int s = -9; s <= 9; ++s) {
    if (s == 0) continue;
    inv = -(float(nmax) + 0.1f * float(s)) / peak;
    sum_lx = sum_l2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = level(inv, i);
      sum_lx += weight(i) * x[i] * float(l);
      sum_l2 += weight(i) * float(l) * float(l);
    }
    if (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2) {
      for (int i = 0; i < n; ++i) L[i] = uint8_t(level(inv, i) + nmax);
      scale = sum_lx / sum_l2;
      best = scale * sum_lx;
    }
  }
  return scale;
}

float codes(int n, int nmax, const float* x, uint8_t* L, const float* w) {
  float hi = 0;
  for (int i = 0; i < n; ++i) hi = std::max(hi, x[i]);
  if (hi < 1e-15f) {
    std::fill(L, L + n, uint8_t(0));
    return 0.f;
  }
  float inv = float(nmax) / hi;
  const float scale0 = 1 / inv;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    const float d = x[i] - scale0 * float(nearest(inv * x[i]));
    best += w[i] * d * d;
  }
  for (int s = -4; s <= 4; ++s) {
    if (s == 0) continue;
    const float inv_s = (0.1f * float(s) + float(nmax)) / hi;
    const float scale_s = 1 / inv_s;
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float d = x[i] - scale_s * float(std::min(nmax, nearest(inv_s * x[i])));
      err += w[i] * d * d;
    }
    if (err < best) {
      best = err;
      inv = inv_s;
    }
  }
  float sum_lx = 0, sum_l2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::min(nmax, nearest(inv * x[i]));
    L[i] = uint8_t(l);
    sum_lx += w[i] * x[i] * float(l);
    sum_l2 += w[i] * float(l) * float(l);
  }
  // Coordinate descent: each code to the level that is optimal with the others fixed,
  // kept when the fit's (Σ w x l)^2 / Σ w l^2 grows.
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      float slx = sum_lx - w[i] * x[i] * float(L[i]);
      float sl2 = sum_l2 - w[i] * float(L[i]) * float(L[i]);
      if (!(slx > 0 && sl2 > 0)) continue;
      const int l = std::min(nmax, nearest(x[i] * sl2 / slx));
      if (l == L[i]) continue;
      slx += w[i] * x[i] * float(l);
      sl2 += w[i] * float(l) * float(l);
      if (slx * slx * sum_l2 > sum_lx * sum_lx * sl2) {
        L[i] = uint8_t(l);
        sum_lx = slx;
        sum_l2 = sl2;
        ++changed;
      }
    }
    if (changed == 0) break;
  }
  return sum_l2 > 0 ? sum_lx / sum_l2 : 0.f;
}

}  // namespace ingot::formats::fit
