// AVX-VNNI prefill GEMM of quantized_matmul with int8 activations: the panel kernel of
// quantized_gemm_ymm.h with VEX vpdpbusd dot products (Intel Alder Lake and later client
// cores, AMD Zen 5). The activations come from quantize_activation_panels_ymm
// (quantized_gemm_avx2.cpp). Only reached after the run-time CPU check.
#define INGOT_GEMM_YMM_TARGET "avx2,fma,f16c,avxvnni"
#define INGOT_GEMM_YMM_VNNI 1
#include "ingot/ops/cpu/quantized_gemm_ymm.h"

namespace ingot::cpu::detail {

void int8act_gemm_avxvnni(const PanelActivations& a, const PackedWeight& w, float* y, int64_t ldy) {
  gemm_ymm(a, w, y, ldy);
}

}  // namespace ingot::cpu::detail
