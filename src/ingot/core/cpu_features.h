// The x86 instruction-set extensions kernels select at run time, detected once.
// (One place, because compilers disagree on which names __builtin_cpu_supports knows:
// clang has no "f16c".)
//
// INGOT_ISA caps what every kernel family (GEMM, attention, activations, quantised
// GEMV) sees, so one machine can run the code paths of an older CPU: the features
// reported are the detected ones limited to the named table (isa_table_features).
// Unset or "native": everything detected.
#pragma once

#include <string_view>

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
  bool avx512vnni = false;  // vpdpbusd on zmm: u8 x s8 dot products into int32 lanes
  bool avxvnni = false;     // AVX-VNNI: the VEX-encoded vpdpbusd on ymm (no AVX-512 needed)

  // The AVX-512 level the kernels' avx512 paths are compiled for (F, BW, VL, DQ + FMA, F16C).
  bool avx512_kernels() const { return avx512f && avx512bw && avx512vl && avx512dq && fma && f16c; }
  bool avx2_kernels() const { return avx2 && fma && f16c; }
};

// The features kernels use: detected once, capped by INGOT_ISA.
const CpuFeatures& cpu_features();
// What the CPU has, before INGOT_ISA.
const CpuFeatures& detected_cpu_features();

// `detected` limited to the table `isa` names (a CPU generation's kernel table):
//   "scalar"     nothing (the portable kernels)
//   "avx2"       AVX2 + FMA + F16C (Haswell .. Skylake client, AMD Zen 1-3)
//   "avxvnni"    avx2 + AVX-VNNI (Intel Alder / Raptor Lake)
//   "avx512"     avx2 + AVX-512 F/BW/VL/DQ, no VNNI, no BF16 (Skylake-SP)
//   "avx512vnni" avx512 + AVX512-VNNI (Cascade Lake, Ice Lake)
//   "native" or "" everything detected.
// A feature the CPU lacks stays off. Throws ValueError naming the accepted values on any
// other name.
CpuFeatures isa_table_features(const CpuFeatures& detected, std::string_view isa);

}  // namespace ingot
