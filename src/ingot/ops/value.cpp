#include "ingot/ops/value.h"

namespace ingot {

std::string Scalar::str() const {
  if (is_bool()) return to_bool() ? "True" : "False";
  if (is_integral()) return std::to_string(to_int());
  return fmt::format("{}", to_double());
}

const char* Value::kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Tensor: return "Tensor";
    case Kind::TensorList: return "Tensor[]";
    case Kind::Int: return "int";
    case Kind::IntList: return "int[]";
    case Kind::Float: return "float";
    case Kind::Bool: return "bool";
    case Kind::Scalar: return "Scalar";
    case Kind::DType: return "ScalarType";
    case Kind::String: return "str";
  }
  return "?";
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::None: return "None";
    case Kind::Tensor:
      return tensor().defined() ? fmt::format("Tensor({}, {})", tensor().dtype(),
                                              tensor().shape_string())
                                : "None";
    case Kind::TensorList: {
      std::string out = "[";
      for (size_t i = 0; i < tensor_list().size(); ++i) {
        out += (i ? ", " : "") + Value(tensor_list()[i]).str();
      }
      return out + "]";
    }
    case Kind::Int: return sym_int().str();
    case Kind::IntList: return shape_str(int_list());
    case Kind::Float: return fmt::format("{}", f64());
    case Kind::Bool: return boolean() ? "True" : "False";
    case Kind::Scalar: return scalar().str();
    case Kind::DType: return std::string(dtype_name(dtype()));
    case Kind::String: return "'" + string() + "'";
  }
  return "?";
}

}  // namespace ingot
