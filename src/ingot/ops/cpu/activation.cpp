#include "ingot/ops/cpu/activation.h"

#include <cmath>

#include "ingot/core/dtype.h"
#include "ingot/core/thread_pool.h"

namespace ingot::cpu {
namespace {

// Elements per thread below which the loop stays on one thread.
constexpr int64_t kGrain = 16384;

template <typename T>
void silu_mul_portable(T* out, const T* gate, const T* up, int64_t n) {
  using M = opmath_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    const M g = M(gate[i]);
    M y = g / (M(1) + std::exp(-g));
    if (up) y *= M(up[i]);
    out[i] = T(y);
  }
}

}  // namespace

void silu_mul(const Tensor& out, const Tensor& gate, const Tensor& up) {
  const int64_t n = out.numel();
  INGOT_CHECK(
      gate.is_contiguous() && out.is_contiguous() && gate.numel() == n &&
          gate.dtype() == out.dtype() &&
          (!up.defined() || (up.is_contiguous() && up.numel() == n && up.dtype() == out.dtype())),
      InternalError, "[cpu::silu_mul] needs contiguous operands of one dtype and size");
  // The widest kernel set this CPU runs (checked once per call, cached by cpu_features).
  const bool avx512 = activation::avx512_available();
  const bool avx2 = !avx512 && activation::avx2_available();
  INGOT_DISPATCH_FLOATING_TYPES(out.dtype(), "silu_mul", [&]<typename T>() {
    T* o = out.data<T>();
    const T* g = gate.data<T>();
    const T* u = up.defined() ? up.data<T>() : nullptr;
    parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      if constexpr (std::is_same_v<T, float>) {
        const float* ub = u ? u + b : nullptr;
        if (avx512) return activation::silu_mul_f32_avx512(o + b, g + b, ub, e - b);
        if (avx2) return activation::silu_mul_f32_avx2(o + b, g + b, ub, e - b);
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        auto bits = [](const BFloat16* p) { return reinterpret_cast<const uint16_t*>(p); };
        uint16_t* ob = reinterpret_cast<uint16_t*>(o + b);
        const uint16_t* ub = u ? bits(u + b) : nullptr;
        if (avx512) return activation::silu_mul_bf16_avx512(ob, bits(g + b), ub, e - b);
        if (avx2) return activation::silu_mul_bf16_avx2(ob, bits(g + b), ub, e - b);
      }
      silu_mul_portable(o + b, g + b, u ? u + b : nullptr, e - b);
    });
  });
}

}  // namespace ingot::cpu
