// Copy with broadcasting and dtype conversion: dst[...] = convert(src[...]).
#pragma once

#include "ingot/core/tensor.h"

namespace ingot::cpu {

// src broadcasts to dst's shape; any dtype pair (bool conversion is `!= 0`).
void copy_cast(const Tensor& dst, const Tensor& src);

}  // namespace ingot::cpu
