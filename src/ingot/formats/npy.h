// NumPy .npy files (format versions 1.0, 2.0, 3.0): read into a Tensor, write from one.
//
// Supported dtypes: bool, u1, i1, i2, i4, i8, f2, f4, f8 in little-endian or
// byte-order-free form; C or Fortran order (Fortran data is returned contiguous).
// Malformed files are IoErrors naming the file and the field at fault.
#pragma once

#include <string>

#include "ingot/core/tensor.h"

namespace ingot::formats {

// Parses a whole .npy image; `origin` names the source in errors. The fuzz target
// drives this directly.
Tensor parse_npy(const uint8_t* bytes, size_t size, const std::string& origin);
Tensor load_npy(const std::string& path);
// Writes format 1.0, C order (bfloat16 has no NumPy dtype: convert first).
void save_npy(const std::string& path, const Tensor& t);

}  // namespace ingot::formats
