// Programs of seed 001 shared by the export tests and the exporters' conformance tests
// (ONNX Runtime, OpenVINO, ExecuTorch), so every backend is judged on the same programs.
#pragma once

#include <optional>
#include <tuple>

#include "ingot/export/control_flow.h"
#include "ingot/ir/pytree.h"
#include "ingot/nn/module.h"
#include "ingot/ops/functional.h"

namespace ingot::testing {

// z = y + 7 with static y: the graph adds the folded constant.
struct AddStatic : nn::Module {
  AddStatic() : Module("AddStatic") {}
  Tensor forward(const Tensor& x, int y) {
    int z = y + 7;
    return add(x, Scalar(z));
  }
};

// A buffer advanced in place (BUFFER_MUTATION) next to a parameter that is only read.
struct Counter : nn::Module {
  Tensor* count;
  Tensor* weight;
  Counter() : Module("Counter") {
    count = register_buffer("count", zeros({3}));
    weight = register_parameter("weight", ones({3}));
  }
  Tensor forward(const Tensor& x) {
    add_(*count, Scalar(1));
    return add(mul(x, *weight), *count);
  }
};

// A user type registered as a pytree node (pytree.register_dataclass).
struct SeedInput {
  Tensor f;
  Tensor p;
};

// Slice and select assignment into a buffer: rows 1 and 3 of the cache are written, the
// old row 1 is returned.
struct RingWriter : nn::Module {
  Tensor* cache;
  RingWriter() : Module("RingWriter") { cache = register_buffer("cache", zeros({4, 3})); }
  Tensor forward(const Tensor& x) {
    Tensor row = slice(*cache, 0, 1, 2);
    copy_(slice(*cache, 0, 1, 2), x);
    copy_(select(*cache, 0, 3), mul(select(x, 0, 0), Scalar(2)));
    return add(row, Scalar(0));
  }
};

// An optional input: y * x when y is given, x + x when it is None.
inline constexpr auto optional_product = [](const Tensor& x, const std::optional<Tensor>& y) {
  return y ? mul(*y, x) : add(x, x);
};

// cond on data: sin(x) when sum(x) > 0, else cos(x).
inline constexpr auto sin_or_cos_by_sum = [](const Tensor& x) {
  return cond(
      gt(sum(x), Scalar(0)), [](const TensorList& in) { return TensorList{sin(in[0])}; },
      [](const TensorList& in) { return TensorList{cos(in[0])}; }, {x})[0];
};

// cond on a size (shape-dependent control flow kept as cond): x + 1 when x has more
// than 4 rows, else 3x.
inline constexpr auto branch_on_rows = [](const Tensor& x) {
  return cond(
      x.sym_size(0) > SymInt(4),
      [](const TensorList& in) { return TensorList{add(in[0], Scalar(1))}; },
      [](const TensorList& in) { return TensorList{mul(in[0], Scalar(3))}; }, {x})[0];
};

// map over the rows of xs (each row * y + 1) and a while_loop doubling 1 until >= 10.
inline constexpr auto map_and_while_loop = [](const Tensor& xs, const Tensor& y) {
  Tensor mapped =
      map([](const TensorList& in) { return TensorList{add(mul(in[0], in[1]), Scalar(1))}; },
          {xs}, {y})[0];
  Tensor counted = while_loop([](const TensorList& s) { return TensorList{lt(s[0], s[1])}; },
                              [](const TensorList& s) { return TensorList{mul(s[0], Scalar(2))}; },
                              {full({}, 1.0)}, {full({}, 10.0)})[0];
  return std::tuple{mapped, counted};
};

// nonzero's count is an unbacked size; check() settles the branch (the assert is dropped).
inline constexpr auto nonzero_then_branch = [](const Tensor& x) {
  Tensor idx = nonzero(x);
  check(idx.sym_size(0) > SymInt(0));
  return std::tuple{idx, idx.sym_size(0) > SymInt(0) ? sin(x) : cos(x)};
};

// item(): the first k rows of x, k read from data and bounded by check().
inline constexpr auto first_k_rows = [](const Tensor& x, const Tensor& k) {
  SymInt n = item_int(k);
  check_is_size(n);
  check(n <= x.sym_size(0));
  return narrow(x, 0, SymInt(0), n);
};

}  // namespace ingot::testing

INGOT_PYTREE_DATACLASS(ingot::testing::SeedInput, f, p)
