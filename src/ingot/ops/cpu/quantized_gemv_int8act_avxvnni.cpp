// AVX-VNNI kernels of quantized_matmul with int8 activations (QuantActivations::Int8):
// the row kernels of quantized_gemv_int8act_ymm.h with vpdpbusd (VEX, ymm) dot products,
// for CPUs with AVX-VNNI and AVX2 (Intel Alder Lake and later client cores, AMD Zen 5).
// The activations are quantised by quantize_row_avx2. Only reached after the run-time CPU
// check.
#define INGOT_INT8ACT_YMM_TARGET "avx2,fma,f16c,avxvnni"
#define INGOT_INT8ACT_YMM_VNNI 1
#include "ingot/ops/cpu/quantized_gemv_int8act_ymm.h"

namespace ingot::cpu::detail {

__attribute__((target("avx2,fma,f16c,avxvnni"))) void int8act_rows_avxvnni(const Int8Activations& a,
                                                                           const PackedWeight& w,
                                                                           int64_t r0, int64_t r1,
                                                                           float* y, int64_t ldy) {
  int8act_rows_ymm(a, w, r0, r1, y, ldy);
}

}  // namespace ingot::cpu::detail
