// Element types and PyTorch's type-promotion lattice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingot/core/error.h"
#include "ingot/core/half.h"

namespace ingot {

// Order matters: promote_types() and the tables in dtype.cpp index by it.
enum class DType : uint8_t { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64 };

inline constexpr int kNumDTypes = 10;

// PyTorch names: "float32", "bfloat16", "int64", "bool", ...
std::string_view dtype_name(DType t);
// Parses a PyTorch name or a safetensors/numpy-style short name ("F32", "BF16", "I64").
// Throws DTypeError naming the string when it is not a dtype.
DType parse_dtype(std::string_view name);

size_t itemsize(DType t);
bool is_floating(DType t);
bool is_integral(DType t, bool include_bool = false);

// The smallest dtype both a and b convert to without losing range, as
// torch.promote_types does (u8 + i8 -> i16, f16 + bf16 -> f32, int + float -> float).
DType promote_types(DType a, DType b);

// C++ type <-> DType.
template <typename T>
struct DTypeOf;
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::I8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::I16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::F16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::BF16; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

// The type arithmetic on T is carried out in (float for the 16-bit floats).
template <typename T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <typename T>
using opmath_t = typename OpMath<T>::type;

}  // namespace ingot

// INGOT_DISPATCH_*(dtype, "op", [&]<typename scalar_t>() { ... }) calls the lambda with
// scalar_t bound to the C++ type of dtype; other dtypes throw DTypeError naming op.
#define INGOT_DISPATCH_CASE_(D, T) \
  case ::ingot::DType::D:          \
    return fn.template operator()<T>();

#define INGOT_DISPATCH_ALL_TYPES(dtype, op_name, ...)                                         \
  [&](auto&& fn) {                                                                            \
    switch (dtype) {                                                                          \
      INGOT_DISPATCH_CASE_(Bool, bool)                                                        \
      INGOT_DISPATCH_CASE_(U8, uint8_t)                                                       \
      INGOT_DISPATCH_CASE_(I8, int8_t)                                                        \
      INGOT_DISPATCH_CASE_(I16, int16_t)                                                      \
      INGOT_DISPATCH_CASE_(I32, int32_t)                                                      \
      INGOT_DISPATCH_CASE_(I64, int64_t)                                                      \
      INGOT_DISPATCH_CASE_(F16, ::ingot::Half)                                                \
      INGOT_DISPATCH_CASE_(BF16, ::ingot::BFloat16)                                           \
      INGOT_DISPATCH_CASE_(F32, float)                                                        \
      INGOT_DISPATCH_CASE_(F64, double)                                                       \
    }                                                                                         \
    INGOT_THROW(::ingot::DTypeError, "[{}] unsupported dtype {}", op_name,                    \
                ::ingot::dtype_name(dtype));                                                  \
  }(__VA_ARGS__)

// Numbers only (no bool).
#define INGOT_DISPATCH_NUMERIC_TYPES(dtype, op_name, ...)                                     \
  [&](auto&& fn) {                                                                            \
    switch (dtype) {                                                                          \
      INGOT_DISPATCH_CASE_(U8, uint8_t)                                                       \
      INGOT_DISPATCH_CASE_(I8, int8_t)                                                        \
      INGOT_DISPATCH_CASE_(I16, int16_t)                                                      \
      INGOT_DISPATCH_CASE_(I32, int32_t)                                                      \
      INGOT_DISPATCH_CASE_(I64, int64_t)                                                      \
      INGOT_DISPATCH_CASE_(F16, ::ingot::Half)                                                \
      INGOT_DISPATCH_CASE_(BF16, ::ingot::BFloat16)                                           \
      INGOT_DISPATCH_CASE_(F32, float)                                                        \
      INGOT_DISPATCH_CASE_(F64, double)                                                       \
      default:                                                                                \
        break;                                                                                \
    }                                                                                         \
    INGOT_THROW(::ingot::DTypeError, "[{}] unsupported dtype {}: expected a numeric dtype",   \
                op_name, ::ingot::dtype_name(dtype));                                         \
  }(__VA_ARGS__)

// Floating dtypes only (f16, bf16, f32, f64).
#define INGOT_DISPATCH_FLOATING_TYPES(dtype, op_name, ...)                                    \
  [&](auto&& fn) {                                                                            \
    switch (dtype) {                                                                          \
      INGOT_DISPATCH_CASE_(F16, ::ingot::Half)                                                \
      INGOT_DISPATCH_CASE_(BF16, ::ingot::BFloat16)                                           \
      INGOT_DISPATCH_CASE_(F32, float)                                                        \
      INGOT_DISPATCH_CASE_(F64, double)                                                       \
      default:                                                                                \
        break;                                                                                \
    }                                                                                         \
    INGOT_THROW(::ingot::DTypeError,                                                          \
                "[{}] unsupported dtype {}: expected a floating dtype (float16, bfloat16, "   \
                "float32, float64)",                                                          \
                op_name, ::ingot::dtype_name(dtype));                                         \
  }(__VA_ARGS__)

template <>
struct fmt::formatter<ingot::DType> : fmt::formatter<std::string_view> {
  auto format(ingot::DType t, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(ingot::dtype_name(t), ctx);
  }
};
