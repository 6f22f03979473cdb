#include "ingot/formats/ggml_refine.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ingot/core/half.h"
#include "ingot/formats/ggml_fit.h"

namespace ingot::formats {
namespace {

constexpr int kRounds = 4;
constexpr int kReach = 2;  // codes searched within ±kReach

float f16_round(float v) {
  return Half::to_float(Half::from_float(v));
}

// One affine sub-block of 32 on grid (dj, mj): nearest levels into L, returns the error.
double affine_sub_block(const float* x, const float* w, int nmax, float dj, float mj, uint8_t* L) {
  double e = 0;
  for (int l = 0; l < 32; ++l) {
    if (dj != 0) L[l] = uint8_t(std::clamp(fit::nearest((x[l] + mj) / dj), 0, nmax));
    const double d = double(dj * float(L[l]) - mj) - x[l];
    e += w[l] * d * d;
  }
  return e;
}

// One symmetric sub-block of 16 on grid dj: nearest levels into L, returns the error.
double symmetric_sub_block(const float* x, const float* w, float dj, uint8_t* L) {
  double e = 0;
  for (int l = 0; l < 16; ++l) {
    if (dj != 0) L[l] = uint8_t(std::clamp(fit::nearest(x[l] / dj), -32, 31) + 32);
    const double d = double(dj * float(int(L[l]) - 32)) - x[l];
    e += w[l] * d * d;
  }
  return e;
}

}  // namespace

void refine_affine_superblock(const float* x, const float* w, int nmax, float& d, float& dmin,
                              uint8_t* sc, uint8_t* mn, uint8_t* L) {
  auto total = [&](float d16, float m16, const uint8_t* s, const uint8_t* m, uint8_t* lv) {
    double e = 0;
    for (int j = 0; j < 8; ++j)
      e += affine_sub_block(x + 32 * j, w + 32 * j, nmax, d16 * float(s[j]), m16 * float(m[j]),
                            lv + 32 * j);
    return e;
  };
  double best = total(f16_round(d), f16_round(dmin), sc, mn, L);
  for (int round = 0; round < kRounds; ++round) {
    uint8_t s2[8], m2[8], L2[256];
    std::memcpy(s2, sc, 8);
    std::memcpy(m2, mn, 8);
    std::memcpy(L2, L, 256);
    float dd = d, dm = dmin;
    // (1) codes, sub-block by sub-block.
    const float d16 = f16_round(dd), m16 = f16_round(dm);
    for (int j = 0; j < 8; ++j) {
      uint8_t cand[32];
      double be = affine_sub_block(x + 32 * j, w + 32 * j, nmax, d16 * float(s2[j]),
                                   m16 * float(m2[j]), L2 + 32 * j);
      const int s0 = s2[j], n0 = m2[j];
      for (int a = std::max(0, s0 - kReach); a <= std::min(63, s0 + kReach); ++a) {
        for (int b = std::max(0, n0 - kReach); b <= std::min(63, n0 + kReach); ++b) {
          std::memcpy(cand, L2 + 32 * j, 32);
          const double e =
              affine_sub_block(x + 32 * j, w + 32 * j, nmax, d16 * float(a), m16 * float(b), cand);
          if (e < be) {
            be = e;
            s2[j] = uint8_t(a);
            m2[j] = uint8_t(b);
            std::memcpy(L2 + 32 * j, cand, 32);
          }
        }
      }
    }
    // (2) the factors: minimise Σ w (d·a - dmin·b - x)² with a = sc·q, b = m.
    double saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
    for (int i = 0; i < 256; ++i) {
      const double a = double(s2[i / 32]) * L2[i], b = m2[i / 32];
      saa += w[i] * a * a;
      sab += w[i] * a * b;
      sbb += w[i] * b * b;
      sax += w[i] * a * x[i];
      sbx += w[i] * b * x[i];
    }
    const double det = saa * sbb - sab * sab;
    if (det > 0) {
      const double nd = (sax * sbb - sbx * sab) / det;
      const double nm = (sax * sab - sbx * saa) / det;
      if (nd > 0 && nm >= 0) dd = float(nd), dm = float(nm);
    }
    const double e = total(f16_round(dd), f16_round(dm), s2, m2, L2);
    if (!(e < best)) break;
    best = e;
    d = dd, dmin = dm;
    std::memcpy(sc, s2, 8);
    std::memcpy(mn, m2, 8);
    std::memcpy(L, L2, 256);
  }
}

void refine_symmetric_superblock(const float* x, const float* w, float& d, int8_t* sc, uint8_t* L) {
  auto total = [&](float d16, const int8_t* s, uint8_t* lv) {
    double e = 0;
    for (int j = 0; j < 16; ++j)
      e += symmetric_sub_block(x + 16 * j, w + 16 * j, d16 * float(s[j]), lv + 16 * j);
    return e;
  };
  double best = total(f16_round(d), sc, L);
  for (int round = 0; round < kRounds; ++round) {
    int8_t s2[16];
    uint8_t L2[256];
    std::memcpy(s2, sc, 16);
    std::memcpy(L2, L, 256);
    float dd = d;
    const float d16 = f16_round(dd);
    for (int j = 0; j < 16; ++j) {
      uint8_t cand[16];
      double be = symmetric_sub_block(x + 16 * j, w + 16 * j, d16 * float(s2[j]), L2 + 16 * j);
      const int s0 = s2[j];
      for (int a = std::max(-128, s0 - kReach); a <= std::min(127, s0 + kReach); ++a) {
        std::memcpy(cand, L2 + 16 * j, 16);
        const double e = symmetric_sub_block(x + 16 * j, w + 16 * j, d16 * float(a), cand);
        if (e < be) {
          be = e;
          s2[j] = int8_t(a);
          std::memcpy(L2 + 16 * j, cand, 16);
        }
      }
    }
    double saa = 0, sax = 0;
    for (int i = 0; i < 256; ++i) {
      const double a = double(s2[i / 16]) * (int(L2[i]) - 32);
      saa += w[i] * a * a;
      sax += w[i] * a * x[i];
    }
    if (saa > 0) dd = float(sax / saa);
    const double e = total(f16_round(dd), s2, L2);
    if (!(e < best)) break;
    best = e;
    d = dd;
    std::memcpy(sc, s2, 16);
    std::memcpy(L, L2, 256);
  }
}

void refine_scale_block(const float* x, const float* w, int n, int lo, int hi, float& d, int* q) {
  // The error of f16 scale `bits`, its nearest levels into `lv`.
  auto error = [&](uint16_t bits, int* lv) {
    const float s = Half::to_float(bits);
    double e = 0;
    for (int i = 0; i < n; ++i) {
      lv[i] = s != 0 ? std::clamp(fit::nearest(x[i] / s), lo, hi) : 0;
      const double r = double(s * float(lv[i])) - x[i];
      e += w[i] * r * r;
    }
    return e;
  };
  int cand[256];
  uint16_t best_bits = Half::from_float(d);
  double best = error(best_bits, q);
  for (int round = 0; round < 3; ++round) {
    const uint16_t centre = best_bits;
    bool moved = false;
    for (int k = -16; k <= 16; ++k) {
      const int b = int(centre) + k;
      // Same sign, finite, non-zero: the magnitude bits stay within 1 .. 0x7bff.
      if ((b & 0x8000) != (centre & 0x8000) || (b & 0x7fff) == 0 || (b & 0x7fff) > 0x7bff) continue;
      const double e = error(uint16_t(b), cand);
      if (e < best) {
        best = e;
        best_bits = uint16_t(b);
        std::copy(cand, cand + n, q);
        moved = true;
      }
    }
    // Least squares for the levels found, as the next centre.
    double sqx = 0, sqq = 0;
    for (int i = 0; i < n; ++i) sqx += w[i] * q[i] * x[i], sqq += w[i] * double(q[i]) * q[i];
    if (sqq > 0) {
      const uint16_t ls = Half::from_float(float(sqx / sqq));
      const double e = error(ls, cand);
      if (e < best) {
        best = e;
        best_bits = ls;
        std::copy(cand, cand + n, q);
        moved = true;
      }
    }
    if (!moved) break;
  }
  d = Half::to_float(best_bits);
}

}  // namespace ingot::formats
