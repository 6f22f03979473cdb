#include "ingot/ir/input_binding.h"

#include <fmt/format.h>

namespace ingot {

int64_t evaluate_size(const sym::Expr& e, const sym::Bindings& b) {
  return sym::evaluate(e, [&](const sym::Expr& s) -> int64_t {
    auto it = b.find(s.name());
    INGOT_CHECK(it != b.end(), ValueError,
                "[runtime] symbol '{}' is not bound (no input or earlier value defines it)",
                s.name());
    return it->second;
  });
}

std::string describe_range(const std::string& name, const sym::ValueRange& r) {
  if (r.hi == sym::ValueRange::kPosInf) return fmt::format("{} >= {}", name, r.lo);
  return fmt::format("{} in [{}, {}]", name, r.lo, r.hi);
}

namespace {

// Binds symbol `e` (a bare symbol) to `actual`, or checks it; for other expressions,
// records the check for after every symbol is bound.
void bind_dim(const sym::Expr& e, int64_t actual, const std::string& what, sym::Bindings& b,
              std::vector<std::pair<sym::Expr, std::pair<int64_t, std::string>>>& deferred) {
  if (e.is_integer()) {
    INGOT_CHECK(e.value() == actual, ShapeError,
                "[runtime] {} is {}, but the program was exported for {}", what, actual, e.value());
    return;
  }
  if (e.is_symbol()) {
    auto [it, inserted] = b.emplace(e.name(), actual);
    INGOT_CHECK(inserted || it->second == actual, ShapeError,
                "[runtime] {} is {}, but it must equal the other sizes marked '{}' ({})", what,
                actual, e.name(), it->second);
    return;
  }
  deferred.push_back({e, {actual, what}});
}

}  // namespace

sym::Bindings bind_inputs(const ExportedProgram& p, const std::vector<Tensor>& inputs) {
  const ir::Graph& g = *p.graph;
  INGOT_CHECK(inputs.size() == g.inputs.size(), ValueError,
              "[runtime] the program takes {} inputs, got {}", g.inputs.size(), inputs.size());
  sym::Bindings b;
  std::vector<std::pair<sym::Expr, std::pair<int64_t, std::string>>> deferred;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::ValueInfo& v = g.value(g.inputs[i]);
    const std::string& who = p.signature.inputs[i].target;
    const Tensor& t = inputs[i];
    INGOT_CHECK(t.defined() && t.has_storage(), ValueError, "[runtime] input '{}' has no data",
                who);
    INGOT_CHECK(t.dtype() == v.dtype, DTypeError,
                "[runtime] input '{}' is {}, the program expects {}", who, dtype_name(t.dtype()),
                dtype_name(v.dtype));
    INGOT_CHECK(t.dim() == int64_t(v.sizes.size()), ShapeError,
                "[runtime] input '{}' has {} dims {}, the program expects {} ({})", who, t.dim(),
                t.shape_string(), v.sizes.size(), ir::meta_str(v));
    for (size_t d = 0; d < v.sizes.size(); ++d) {
      bind_dim(v.sizes[d], t.size(int64_t(d)), fmt::format("input '{}' dim {}", who, d), b,
               deferred);
    }
  }
  for (const auto& [name, r] : p.range_constraints) {
    auto it = b.find(name);
    if (it == b.end() || !r.backed) continue;
    if (r.range.contains(it->second)) continue;
    // Name the first input dim that carries the symbol.
    std::string where = name;
    for (size_t i = 0; i < inputs.size() && where == name; ++i) {
      const ir::ValueInfo& v = g.value(g.inputs[i]);
      for (size_t d = 0; d < v.sizes.size(); ++d) {
        if (v.sizes[d].is_symbol() && v.sizes[d].name() == name) {
          where = fmt::format("input '{}' dim {}", p.signature.inputs[i].target, d);
          break;
        }
      }
    }
    INGOT_THROW(ShapeError, "[runtime] {} is {}, outside {}", where, it->second,
                describe_range(name, r.range));
  }
  for (const auto& [e, check] : deferred) {
    int64_t expected = evaluate_size(e, b);
    INGOT_CHECK(expected == check.first, ShapeError,
                "[runtime] {} is {}, but the program needs {} = {}", check.second, check.first,
                e.str(), expected);
  }
  return b;
}

}  // namespace ingot
