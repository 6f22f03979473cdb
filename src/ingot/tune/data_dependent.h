// Helpers for the data-dependent parts of the export-friendly modules of tune/
// (torchtune's modules/_export, seed 000). Data itself is read with item_int
// (export/control_flow.h, torch's .item()), an unbacked symbol under export.
//
//  * symint_to_tensor: a 0-d int64 tensor equal to a (possibly symbolic) size, built
//    from ops so a tracer records how it depends on the size (the C++ Scalar cannot hold
//    a SymInt, so `cache_pos.add_(seq_len)` adds this tensor).
//  * require: torch._check with a readable message. When the condition is already
//    decided (eager, or plain sizes) and false it throws ValueError with `message()`;
//    otherwise it is ingot::check (a fact plus a runtime assert under export).
#pragma once

#include <functional>
#include <source_location>
#include <string>

#include "ingot/core/tensor.h"

namespace ingot::tune {

Tensor symint_to_tensor(const SymInt& n);

void require(const SymBool& condition, const std::function<std::string()>& message,
             std::source_location where = std::source_location::current());

}  // namespace ingot::tune
