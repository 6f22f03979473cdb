// The AVX-VNNI compile of the ymm panel GEMM (quantized_gemm_ymm.h with INGOT_GEMM_YMM_VNNI
// 1) runs only on CPUs with AVX-VNNI (Intel Alder Lake+, AMD Zen 5). To run its code path
// on the AVX-512 CPUs most CI machines have, this file compiles the same kernel with the
// EVEX vpdpbusd (AVX512-VNNI + AVX512VL: the same operation on ymm registers) and checks
// that it gives the maddubs compile's bits (int8act_gemm_avx2: the same integer sums in the
// same f32 order) on every mode, m around panel boundaries and k with tails.
#define INGOT_GEMM_YMM_TARGET "avx2,fma,f16c,avx512f,avx512vl,avx512vnni"
#define INGOT_GEMM_YMM_VNNI 1
#define INGOT_GEMM_YMM_DPBUSD _mm256_dpbusd_epi32
#include <gtest/gtest.h>

#include <random>

#include "ingot/core/cpu_features.h"
#include "ingot/ops/cpu/quantize_pack.h"
#include "ingot/ops/cpu/quantized_gemm_ymm.h"

namespace ingot::cpu {
namespace {

TEST(QuantizedGemmYmmEvex, VnniPathEqualsMaddubsBits) {
  const CpuFeatures& f = cpu_features();
  if (!f.avx512_kernels() || !f.avx512vnni)
    GTEST_SKIP() << "this CPU (after INGOT_ISA) has no AVX512-VNNI + VL to run the EVEX "
                    "stand-in for the AVX-VNNI panel GEMM";
  struct Case {
    int bits;
    int64_t group;  // 0: per row
    bool zeros;
    int64_t k;
  };
  const int64_t n = 45;  // 4-row tiles with a remainder
  for (const Case& c : {Case{8, 0, false, 200}, Case{8, 0, false, 1056}, Case{4, 32, false, 224},
                        Case{4, 32, true, 1088}, Case{4, 64, true, 192}, Case{4, 128, false, 384}})
    for (int64_t m : {1, 7, 8, 9, 16, 17, 25, 40}) {
      std::mt19937 rng(uint32_t(c.k + m));
      std::uniform_real_distribution<float> u(-1, 1);
      std::vector<float> w(size_t(n * c.k)), x(size_t(m * c.k));
      for (float& v : w) v = u(rng);
      for (float& v : x) v = u(rng);
      const int64_t g = c.group ? c.group : c.k;
      const PackedBuffers p = quantize_weight(w.data(), n, c.k, c.bits, g, c.zeros);
      const PackedWeight pw{
          p.q.data(), p.scales.data(), c.zeros ? p.zeros.data() : nullptr, c.bits, n, c.k, g};
      detail::PanelActivations pa;
      detail::quantize_activation_panels_ymm(x.data(), c.k, m, pw, pa);
      std::vector<float> evex(size_t(m * n)), maddubs(size_t(m * n));
      detail::gemm_ymm(pa, pw, evex.data(), n);
      detail::int8act_gemm_avx2(pa, pw, maddubs.data(), n);
      ASSERT_EQ(evex, maddubs) << "bits " << c.bits << " group " << c.group << " zeros " << c.zeros
                               << " k " << c.k << " m " << m;
    }
}

}  // namespace
}  // namespace ingot::cpu
