#include "ingot/exporters/lowering/node_arguments.h"

#include "ingot/core/error.h"

namespace ingot::exporters::lowering {

bool NodeArguments::is_none(size_t i) const {
  return i >= node_.args.size() || std::holds_alternative<std::monostate>(node_.args[i]);
}

const ir::ValueInfo& NodeArguments::in_info(size_t i) const {
  return graph_.value(std::get<ir::TensorRef>(node_.args.at(i)).id);
}

std::vector<const ir::ValueInfo*> NodeArguments::in_list_info(size_t i) const {
  std::vector<const ir::ValueInfo*> out;
  for (const auto& e : std::get<ir::OptionalValueList>(node_.args.at(i))) {
    out.push_back(e ? &graph_.value(*e) : nullptr);
  }
  return out;
}

sym::Expr NodeArguments::expr(size_t i) const {
  const ir::Argument& a = node_.args.at(i);
  if (const auto* e = std::get_if<sym::Expr>(&a)) return *e;
  if (const auto* s = std::get_if<Scalar>(&a)) return sym::integer(s->to_int());
  if (const auto* b = std::get_if<bool>(&a)) return sym::integer(*b);
  INGOT_THROW(InternalError, "[{}] {}: argument {} is not an integer", backend_, node_.target, i);
}

std::optional<sym::Expr> NodeArguments::opt_expr(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return expr(i);
}

int64_t NodeArguments::int_(size_t i) const {
  sym::Expr e = expr(i);
  if (!e.is_integer())
    unsupported(fmt::format("a symbolic value ({}) for argument {}", e.str(), i));
  return e.value();
}

std::vector<sym::Expr> NodeArguments::exprs(size_t i) const {
  const ir::Argument& a = node_.args.at(i);
  if (const auto* l = std::get_if<std::vector<sym::Expr>>(&a)) return *l;
  return {expr(i)};
}

std::vector<int64_t> NodeArguments::ints(size_t i) const {
  std::vector<int64_t> out;
  for (const sym::Expr& e : exprs(i)) {
    if (!e.is_integer())
      unsupported(fmt::format("a symbolic value ({}) in argument {}", e.str(), i));
    out.push_back(e.value());
  }
  return out;
}

std::optional<std::vector<int64_t>> NodeArguments::opt_ints(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return ints(i);
}

double NodeArguments::f64(size_t i) const {
  const ir::Argument& a = node_.args.at(i);
  if (const auto* d = std::get_if<double>(&a)) return *d;
  if (const auto* s = std::get_if<Scalar>(&a)) return s->to_double();
  if (const auto* e = std::get_if<sym::Expr>(&a); e && e->is_integer()) return double(e->value());
  INGOT_THROW(InternalError, "[{}] {}: argument {} is not a float", backend_, node_.target, i);
}

std::optional<double> NodeArguments::opt_f64(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return f64(i);
}

bool NodeArguments::boolean(size_t i) const {
  const ir::Argument& a = node_.args.at(i);
  if (const auto* b = std::get_if<bool>(&a)) return *b;
  if (const auto* s = std::get_if<Scalar>(&a)) return s->to_bool();
  INGOT_THROW(InternalError, "[{}] {}: argument {} is not a bool", backend_, node_.target, i);
}

std::optional<bool> NodeArguments::opt_bool(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return boolean(i);
}

std::optional<DType> NodeArguments::opt_dtype(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return std::get<DType>(node_.args.at(i));
}

std::optional<std::string> NodeArguments::opt_str(size_t i) const {
  if (is_none(i)) return std::nullopt;
  return std::get<std::string>(node_.args.at(i));
}

std::optional<double> NodeArguments::scalar_value(size_t i) const {
  if (is_none(i)) return std::nullopt;
  const ir::Argument& a = node_.args.at(i);
  if (const auto* s = std::get_if<Scalar>(&a)) return s->to_double();
  if (const auto* d = std::get_if<double>(&a)) return *d;
  if (const auto* b = std::get_if<bool>(&a)) return double(*b);
  if (const auto* e = std::get_if<sym::Expr>(&a); e && e->is_integer()) return double(e->value());
  return std::nullopt;
}

const ir::ValueInfo& NodeArguments::out_info(size_t i) const {
  return graph_.value(node_.outputs.at(i));
}

}  // namespace ingot::exporters::lowering
