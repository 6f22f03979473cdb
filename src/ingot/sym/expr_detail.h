// Internals shared by the expression source files (not part of the sym/ API).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ingot/sym/expr.h"

namespace ingot::sym::detail {

// Allocates a node as given (no simplification) and computes its hash.
Expr make_node(Kind kind, int64_t value, std::string name, std::vector<Expr> args,
               std::vector<int64_t> coeffs);

// int64 arithmetic that throws ValueError on overflow instead of wrapping.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);

}  // namespace ingot::sym::detail
