#include "ingot/ops/cpu/copy.h"

#include <cstring>

#include "ingot/ops/cpu/loops.h"

namespace ingot::cpu {
namespace {

// Converts one element; 16-bit floats pass through float, to-bool tests non-zero.
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<opmath_t<From>>(v) != opmath_t<From>(0);
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return To(float(v));
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(float(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

void copy_cast(const Tensor& dst, const Tensor& src) {
  // Same dtype, both contiguous, same shape: a plain memcpy.
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sym_sizes().size() == src.sym_sizes().size() && dst.sizes() == src.sizes()) {
    const size_t bytes = dst.nbytes();
    if (bytes == 0 || dst.raw_data() == src.raw_data()) return;
    std::memmove(dst.raw_data(), src.raw_data(), bytes);
    return;
  }
  INGOT_DISPATCH_ALL_TYPES(dst.dtype(), "copy_", [&]<typename To>() {
    INGOT_DISPATCH_ALL_TYPES(src.dtype(), "copy_", [&]<typename From>() {
      elementwise<To, From>(dst, {&src}, [](From v) { return convert<To>(v); });
    });
  });
}

}  // namespace ingot::cpu
