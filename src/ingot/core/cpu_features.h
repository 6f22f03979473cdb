// The x86 instruction-set extensions kernels select at run time, detected once.
// (One place, because compilers disagree on which names __builtin_cpu_supports knows:
// clang has no "f16c".)
#pragma once

namespace ingot {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512bf16 = false;
  bool avx512vnni = false;  // vpdpbusd: u8 x s8 dot products into int32 lanes

  // The AVX-512 level the kernels' avx512 paths are compiled for (F, BW, VL, DQ + FMA, F16C).
  bool avx512_kernels() const { return avx512f && avx512bw && avx512vl && avx512dq && fma && f16c; }
  bool avx2_kernels() const { return avx2 && fma && f16c; }
};

const CpuFeatures& cpu_features();

}  // namespace ingot
