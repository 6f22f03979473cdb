#include "ingot/core/cpu_features.h"

#include <cstdlib>

#include "ingot/core/error.h"

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
  // CPUID leaf 7, sub-leaf 1, EAX bit 4: AVX-VNNI; bit 5: AVX512_BF16.
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    f.avxvnni = f.avx2 && (a & (1u << 4));
    f.avx512bf16 = f.avx512f && (a & (1u << 5));
  }
#endif
  return f;
}

}  // namespace

CpuFeatures isa_table_features(const CpuFeatures& detected, std::string_view isa) {
  if (isa.empty() || isa == "native") return detected;
  INGOT_CHECK(isa == "scalar" || isa == "avx2" || isa == "avxvnni" || isa == "avx512" ||
                  isa == "avx512vnni",
              ValueError,
              "[cpu_features] INGOT_ISA must be one of scalar, avx2, avxvnni, avx512, avx512vnni, "
              "native; got '{}'",
              isa);
  CpuFeatures f = detected;
  const bool avx512 = isa == "avx512" || isa == "avx512vnni";
  if (isa == "scalar") f = CpuFeatures{};
  if (!avx512) f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = false;
  if (isa != "avx512vnni") f.avx512vnni = false;
  if (isa != "avxvnni") f.avxvnni = false;
  f.avx512bf16 = false;  // no table below native has it
  return f;
}

const CpuFeatures& detected_cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    const char* env = std::getenv("INGOT_ISA");
    return isa_table_features(detected_cpu_features(), env ? env : "");
  }();
  return features;
}

}  // namespace ingot
