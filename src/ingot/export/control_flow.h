// Control-flow operators: cond, map and while_loop (torch.cond / torch.map /
// torch.while_loop), plus check / check_is_size (torch._check / torch._check_is_size).
//
// In eager mode they simply run: cond evaluates its predicate and calls one branch, map
// loops over the leading dim and stacks, while_loop iterates. Under the export tracer
// they become graph nodes that own subgraphs (both branches of a cond are traced), and
// checks become facts of the ShapeEnv plus runtime asserts in the program.
//
// Branch / body functions receive and return flat tensor lists:
//   auto out = cond(x.sum() > 0, [](const TensorList& in) { return TensorList{sin(in[0])}; },
//                   [](const TensorList& in) { return TensorList{cos(in[0])}; }, {x});
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot {

using TensorList = std::vector<Tensor>;
using GraphFn = std::function<TensorList(const TensorList&)>;

// pred: a one-element bool tensor (or a SymBool / bool). Both functions receive
// `operands` and must return tensors of the same count, dtypes and shapes.
TensorList cond(const Tensor& pred, const GraphFn& true_fn, const GraphFn& false_fn,
                const TensorList& operands,
                std::source_location where = std::source_location::current());
TensorList cond(const SymBool& pred, const GraphFn& true_fn, const GraphFn& false_fn,
                const TensorList& operands,
                std::source_location where = std::source_location::current());

// f is called with one slice xs[i][k] of every tensor in `xs` (leading dims must agree)
// followed by `args`; the results of all k are stacked along a new leading dim.
TensorList map(const GraphFn& f, const TensorList& xs, const TensorList& args = {},
               std::source_location where = std::source_location::current());

// while cond_fn(carried ++ additional) is true: carried = body_fn(carried ++ additional).
// cond_fn returns one one-element bool tensor; body_fn returns tensors like `carried`.
TensorList while_loop(const GraphFn& cond_fn, const GraphFn& body_fn, const TensorList& carried,
                      const TensorList& additional = {},
                      std::source_location where = std::source_location::current());

// Tensor data as a number (torch's x.item()) for code that branches or sizes on data.
// Eager: the value. Export: a new unbacked symbol (u0, ...) bound when the program runs;
// branching on it raises a data-dependent error unless check() settled the question.
SymInt item_int(const Tensor& t, std::source_location where = std::source_location::current());
// item_int(t) != 0, for bool tensors.
SymBool item_bool(const Tensor& t, std::source_location where = std::source_location::current());

// torch._check: states that `condition` holds. Eager: throws ValueError (naming `where`)
// when false. Export: a fact for the ShapeEnv and a runtime assert in the program.
void check(const SymBool& condition, std::source_location where = std::source_location::current());
// torch._check_is_size: `size` is a valid size (>= 0).
void check_is_size(const SymInt& size, std::source_location where = std::source_location::current());

}  // namespace ingot
