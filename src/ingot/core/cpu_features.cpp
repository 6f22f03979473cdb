#include "ingot/core/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ingot {
namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
  }
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  // CPUID leaf 7, sub-leaf 0, ECX bit 11: AVX512_VNNI.
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) f.avx512vnni = f.avx512f && (c & (1u << 11));
  // CPUID leaf 7, sub-leaf 1, EAX bit 5: AVX512_BF16.
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512bf16 = f.avx512f && (a & (1u << 5));
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace ingot
