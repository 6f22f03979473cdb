// SymInt / SymBool expressions of a .pt2 archive, parsed into sym::Expr.
//
// torch.export.save writes each symbolic size as sympy's srepr text:
//   "Symbol('s70', positive=True, integer=True)"
//   "Mul(Integer(4), Pow(Symbol('s70', positive=True, integer=True), Integer(2)))"
//   "StrictGreaterThan(Symbol('u0', integer=True), Integer(0))"
// (older writers used str(): "s70", "4*s70**2"; a plain name or integer is accepted too).
// The parser rebuilds the expression through the simplifying sym:: constructors, so the
// result is canonical. Supported heads: Integer, Symbol, Add, Mul, Pow (non-negative
// integer exponent), FloorDiv, Mod / PythonMod, Max, Min, Eq, Ne, StrictLessThan,
// LessThan, StrictGreaterThan, GreaterThan, And, Or, Not, true / false. Anything else
// is an IoError naming the head and the text; nesting is limited to 64 levels.
#pragma once

#include <string>
#include <string_view>

#include "ingot/sym/expr.h"

namespace ingot::pt2 {

// `where` names the value in errors ("x dim 0").
sym::Expr parse_sympy(std::string_view text, const std::string& where);

}  // namespace ingot::pt2
