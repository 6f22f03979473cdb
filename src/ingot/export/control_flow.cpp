#include "ingot/export/control_flow.h"

#include "ingot/core/error.h"
#include "ingot/export/tracer.h"
#include "ingot/ops/functional.h"

namespace ingot {

namespace {

std::string where_str(const std::source_location& w) {
  std::string file = w.file_name();
  size_t slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(w.line());
}

bool eager_predicate(const Tensor& pred, const char* api, const std::source_location& where) {
  INGOT_CHECK(pred.defined() && pred.numel() == 1 && pred.dtype() == DType::Bool, ValueError,
              "[{}] the predicate must be a one-element bool tensor (at {})", api,
              where_str(where));
  return pred.item<bool>();
}

}  // namespace

using ir::Tracer;

TensorList cond(const Tensor& pred, const GraphFn& true_fn, const GraphFn& false_fn,
                const TensorList& operands, std::source_location where) {
  if (Tracer* t = Tracer::current()) return t->cond(&pred, nullptr, true_fn, false_fn, operands, where);
  return eager_predicate(pred, "cond", where) ? true_fn(operands) : false_fn(operands);
}

TensorList cond(const SymBool& pred, const GraphFn& true_fn, const GraphFn& false_fn,
                const TensorList& operands, std::source_location where) {
  if (Tracer* t = Tracer::current()) return t->cond(nullptr, &pred, true_fn, false_fn, operands, where);
  return pred.guard_bool(where) ? true_fn(operands) : false_fn(operands);
}

TensorList map(const GraphFn& f, const TensorList& xs, const TensorList& args,
               std::source_location where) {
  if (Tracer* t = Tracer::current()) return t->map(f, xs, args, where);
  INGOT_CHECK(!xs.empty(), ValueError, "[map] needs at least one tensor to map over (at {})",
              where_str(where));
  const int64_t n = xs[0].size(0);
  for (const Tensor& x : xs) {
    INGOT_CHECK(x.dim() >= 1 && x.size(0) == n, ShapeError,
                "[map] every mapped tensor needs the same leading size {}, got {} (at {})", n,
                x.shape_string(), where_str(where));
  }
  std::vector<TensorList> per_output;
  for (int64_t k = 0; k < n; ++k) {
    TensorList in;
    for (const Tensor& x : xs) in.push_back(select(x, 0, k));
    in.insert(in.end(), args.begin(), args.end());
    TensorList out = f(in);
    if (per_output.empty()) per_output.resize(out.size());
    INGOT_CHECK(out.size() == per_output.size(), ValueError,
                "[map] the function returned {} tensors, then {} (at {})", per_output.size(),
                out.size(), where_str(where));
    for (size_t i = 0; i < out.size(); ++i) per_output[i].push_back(out[i]);
  }
  TensorList result;
  for (auto& parts : per_output) result.push_back(stack(parts, 0));
  return result;
}

TensorList while_loop(const GraphFn& cond_fn, const GraphFn& body_fn, const TensorList& carried,
                      const TensorList& additional, std::source_location where) {
  if (Tracer* t = Tracer::current()) return t->while_loop(cond_fn, body_fn, carried, additional, where);
  TensorList state = carried;
  auto with_additional = [&](TensorList s) {
    s.insert(s.end(), additional.begin(), additional.end());
    return s;
  };
  while (true) {
    TensorList c = cond_fn(with_additional(state));
    INGOT_CHECK(c.size() == 1, ValueError,
                "[while_loop] cond_fn must return one bool tensor, got {} (at {})", c.size(),
                where_str(where));
    if (!eager_predicate(c[0], "while_loop", where)) break;
    TensorList next = body_fn(with_additional(state));
    INGOT_CHECK(next.size() == state.size(), ValueError,
                "[while_loop] body_fn returned {} tensors for {} carried (at {})", next.size(),
                state.size(), where_str(where));
    state = std::move(next);
  }
  return state;
}

SymInt item_int(const Tensor& t, std::source_location where) {
  if (Tracer* tr = Tracer::current()) return tr->item(t, where);
  INGOT_CHECK(t.defined() && t.numel() == 1, ValueError,
              "[item] needs a one-element tensor, got {} (at {})", t.defined() ? t.shape_string() : "undefined",
              where_str(where));
  if (t.dtype() == DType::Bool) return SymInt(int64_t(t.item<bool>()));
  INGOT_CHECK(!is_floating(t.dtype()), DTypeError, "[item_int] tensor is {}, not an integer (at {})",
              dtype_name(t.dtype()), where_str(where));
  return SymInt(to(t, DType::I64).item<int64_t>());
}

SymBool item_bool(const Tensor& t, std::source_location where) { return item_int(t, where) != SymInt(0); }

void check(const SymBool& condition, std::source_location where) {
  if (Tracer* t = Tracer::current()) return t->check(condition, where);
  INGOT_CHECK(condition.guard_bool(where), ValueError, "[check] condition {} is false (at {})",
              condition.str(), where_str(where));
}

void check_is_size(const SymInt& size, std::source_location where) {
  check(size >= SymInt(0), where);
}

}  // namespace ingot
