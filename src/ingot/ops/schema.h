// Op schemas in ATen's notation, parsed into a structure every layer reads.
//
//   "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
//   "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"      (a view)
//   "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)"  (mutates)
//
// Types: Tensor, int, SymInt, float, bool, Scalar, ScalarType, str, each optionally a
// list (`int[]`, `SymInt[2]`, `Tensor?[]`) and/or optional (`Tensor?`, `int[]?`).
// Alias annotations say which outputs alias which inputs and which inputs are written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ingot/ops/value.h"

namespace ingot {

enum class BaseType { Tensor, Int, SymInt, Float, Bool, Scalar, ScalarType, Str };

struct ArgType {
  BaseType base = BaseType::Tensor;
  bool is_list = false;
  int fixed_size = -1;             // `int[2]`: a single int broadcasts to this many
  bool elements_optional = false;  // `Tensor?[]`
  bool optional = false;           // `T?` / `T[]?`
  std::string str() const;
};

struct AliasInfo {
  std::string set;  // "a"
  bool is_write = false;
};

struct Argument {
  std::string name;
  ArgType type;
  std::optional<Value> default_value;
  bool kwarg_only = false;
  std::optional<AliasInfo> alias;
};

struct Schema {
  std::string name;      // "add"
  std::string overload;  // "Tensor" (may be empty)
  std::vector<Argument> arguments;
  std::vector<Argument> returns;

  // "add.Tensor", or "add" without an overload.
  std::string qualified_name() const;
  std::string str() const;
  // Index of the argument named `name`, or -1.
  int argument_index(std::string_view name) const;
  // True when some return aliases an input without writing it (a view op).
  bool is_view() const;
  // Indices of arguments the op writes in place (annotated `(a!)`).
  std::vector<int> mutated_arguments() const;
  // For each return: index of the written argument it aliases, or -1.
  std::vector<int> returns_aliasing_mutated_args() const;
};

// Throws ValueError quoting the schema and the position of the problem.
Schema parse_schema(std::string_view text);

}  // namespace ingot
