#include "ingot/core/dtype.h"

#include <array>

namespace ingot {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::string_view short_name;  // safetensors spelling
  size_t itemsize;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", "BOOL", 1},
    {"uint8", "U8", 1},
    {"int8", "I8", 1},
    {"int16", "I16", 2},
    {"int32", "I32", 4},
    {"int64", "I64", 8},
    {"float16", "F16", 2},
    {"bfloat16", "BF16", 2},
    {"float32", "F32", 4},
    {"float64", "F64", 8},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
size_t itemsize(DType t) { return info(t).itemsize; }

DType parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name || kInfo[i].short_name == name) return static_cast<DType>(i);
  }
  if (name == "float" || name == "torch.float32") return DType::F32;
  if (name == "half" || name == "torch.float16") return DType::F16;
  if (name == "double" || name == "torch.float64") return DType::F64;
  if (name == "long" || name == "torch.int64") return DType::I64;
  if (name == "int" || name == "torch.int32") return DType::I32;
  if (name == "torch.bfloat16") return DType::BF16;
  INGOT_THROW(DTypeError,
              "[parse_dtype] '{}' is not a dtype; expected one of bool, uint8, int8, int16, "
              "int32, int64, float16, bfloat16, float32, float64",
              name);
}

bool is_floating(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

bool is_integral(DType t, bool include_bool) {
  if (t == DType::Bool) return include_bool;
  return t == DType::U8 || t == DType::I8 || t == DType::I16 || t == DType::I32 ||
         t == DType::I64;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // Table from torch/_prims_common and c10/core/ScalarType.cpp, in DType order.
  constexpr DType b1 = DType::Bool, u1 = DType::U8, i1 = DType::I8, i2 = DType::I16,
                  i4 = DType::I32, i8 = DType::I64, f2 = DType::F16, bf = DType::BF16,
                  f4 = DType::F32, f8 = DType::F64;
  constexpr DType table[kNumDTypes][kNumDTypes] = {
      /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace ingot
