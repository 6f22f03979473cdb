// Small ONNX models written by hand with the builder, shared by the round-trip tests and
// the ONNX Runtime conformance tests, with the values they must compute (in plain C++).
#pragma once

#include <cmath>
#include <vector>

#include "ingot/core/half.h"
#include "ingot/exporters/onnx/builder.h"

namespace ingot::exporters::onnx::testing {

// A [rows, cols] row-major matrix of distinct, exactly representable values.
inline std::vector<float> ramp(int64_t n, float scale, float offset = 0.f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = offset + scale * float(i % 17) - 0.5f * float(i % 5);
  return v;
}

// out[batch, 4] = (x + y)[batch, 3] @ w[3, 4]; "batch" is a dim_param.
inline std::vector<float> add_matmul_weight() {
  return ramp(12, 0.25f, -1.f);
}
inline ModelProto add_matmul_model() {
  ModelBuilder mb("add_matmul");
  GraphBuilder& g = mb.graph();
  auto x = g.add_input("x", DataType::Float, {{"batch", 3}});
  auto y = g.add_input("y", DataType::Float, {{"batch", 3}});
  auto w = g.add_initializer(make_tensor("w", add_matmul_weight(), {3, 4}));
  auto sum = g.add_op("Add", {x, y}, {}, "sum");
  auto out = g.add_op("MatMul", {sum, w}, {}, "out");
  g.add_output(out, DataType::Float, {{"batch", 4}});
  return mb.build();
}
inline std::vector<float> add_matmul_reference(const std::vector<float>& x,
                                               const std::vector<float>& y, int64_t batch) {
  std::vector<float> w = add_matmul_weight(), out(size_t(batch * 4), 0.f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k)
        out[size_t(b * 4 + j)] +=
            (x[size_t(b * 3 + k)] + y[size_t(b * 3 + k)]) * w[size_t(k * 4 + j)];
  return out;
}

// out[n] = flag ? x * 2 : x - 1, an If whose branches read the outer x; the then
// branch uses a Constant node, the else branch an initializer of its own.
inline ModelProto if_model() {
  ModelBuilder mb("if");
  GraphBuilder& g = mb.graph();
  auto flag = g.add_input("flag", DataType::Bool, {std::vector<Dim>{}});
  auto x = g.add_input("x", DataType::Float, {{"n"}});
  GraphBuilder then_g = g.subgraph("then_branch");
  auto two = then_g.add_constant(std::vector<float>{2.f}, {}, "two");
  then_g.add_output(then_g.add_op("Mul", {x, two}, {}, "doubled"), DataType::Float, {{"n"}});
  GraphBuilder else_g = g.subgraph("else_branch");
  auto one = else_g.add_initializer(make_tensor("one", std::vector<float>{1.f}, {}));
  else_g.add_output(else_g.add_op("Sub", {x, one}, {}, "decremented"), DataType::Float, {{"n"}});
  auto out =
      g.add_op("If", {flag},
               {attr("then_branch", then_g.build()), attr("else_branch", else_g.build())}, "out");
  g.add_output(out, DataType::Float, {{"n"}});
  return mb.build();
}

// A Loop of `trips` iterations over a carried acc[2]: acc += x each step; outputs the
// final acc and every step's acc stacked as steps[trips, 2].
inline ModelProto loop_model() {
  ModelBuilder mb("loop");
  GraphBuilder& g = mb.graph();
  auto trips = g.add_input("trips", DataType::Int64, {std::vector<Dim>{}});
  auto x = g.add_input("x", DataType::Float, {{2}});
  auto acc0 = g.add_input("acc0", DataType::Float, {{2}});
  GraphBuilder body = g.subgraph("body");
  body.add_input("i", DataType::Int64, {std::vector<Dim>{}});
  auto cond_in = body.add_input("cond_in", DataType::Bool, {std::vector<Dim>{}});
  auto acc_in = body.add_input("acc_in", DataType::Float, {{2}});
  auto cond_out = body.add_op("Identity", {cond_in}, {}, "cond_out");
  auto acc_out = body.add_op("Add", {acc_in, x}, {}, "acc_out");
  auto scan_out = body.add_op("Identity", {acc_out}, {}, "scan_out");
  body.add_output(cond_out, DataType::Bool, {std::vector<Dim>{}});
  body.add_output(acc_out, DataType::Float, {{2}});
  body.add_output(scan_out, DataType::Float, {{2}});
  auto outs = g.add_node("Loop", {trips, "", acc0}, {"acc", "steps"}, {attr("body", body.build())});
  g.add_output(outs[0], DataType::Float, {{2}});
  g.add_output(outs[1], DataType::Float, {{"trips", 2}});
  return mb.build();
}

// y[batch, 64] = x[batch, 64] @ w[64, 64] + b[64]; w (16 KiB) is large enough to be
// stored as external data, b stays inside the model.
inline std::vector<float> external_weight() {
  return ramp(64 * 64, 1.f / 64, -0.125f);
}
inline std::vector<float> external_bias() {
  return ramp(64, 0.5f);
}
inline ModelProto external_model() {
  ModelBuilder mb("external");
  GraphBuilder& g = mb.graph();
  auto x = g.add_input("x", DataType::Float, {{"batch", 64}});
  auto w = g.add_initializer(make_tensor("w", external_weight(), {64, 64}));
  auto b = g.add_initializer(make_tensor("b", external_bias(), {64}));
  auto y = g.add_op("Add", {g.add_op("MatMul", {x, w}), b}, {}, "y");
  g.add_output(y, DataType::Float, {{"batch", 64}});
  return mb.build();
}
inline std::vector<float> external_reference(const std::vector<float>& x, int64_t batch) {
  std::vector<float> w = external_weight(), b = external_bias(), out(size_t(batch * 64));
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t j = 0; j < 64; ++j) {
      float acc = 0.f;
      for (int64_t k = 0; k < 64; ++k) acc += x[size_t(r * 64 + k)] * w[size_t(k * 64 + j)];
      out[size_t(r * 64 + j)] = acc + b[size_t(j)];
    }
  return out;
}

// sum[4] = x + float(h) + float(b) with an f16 initializer h and a bf16 initializer b;
// sum16 = float16(sum).
inline std::vector<Half> half_values() {
  return {Half(0.5f), Half(-1.25f), Half(3.f), Half(1e-3f)};
}
inline std::vector<BFloat16> bfloat_values() {
  return {BFloat16(2.f), BFloat16(-0.375f), BFloat16(100.f), BFloat16(1.f / 3)};
}
inline ModelProto half_model() {
  ModelBuilder mb("half");
  GraphBuilder& g = mb.graph();
  auto x = g.add_input("x", DataType::Float, {{4}});
  auto h = g.add_initializer(make_tensor("h", half_values(), {4}));
  auto b = g.add_initializer(make_tensor("b", bfloat_values(), {4}));
  auto hf = g.add_op("Cast", {h}, {attr("to", int64_t(DataType::Float))});
  auto bf = g.add_op("Cast", {b}, {attr("to", int64_t(DataType::Float))});
  auto sum = g.add_op("Add", {g.add_op("Add", {x, hf}), bf}, {}, "sum");
  auto sum16 = g.add_op("Cast", {sum}, {attr("to", int64_t(DataType::Float16))}, "sum16");
  g.add_output(sum, DataType::Float, {{4}});
  g.add_output(sum16, DataType::Float16, {{4}});
  return mb.build();
}

// The static-cache pattern: output.cache = ScatterND(input.cache, pos, update), an
// input/output pair that IO binding can share so the write lands in place.
inline ModelProto cache_update_model() {
  ModelBuilder mb("cache_update");
  GraphBuilder& g = mb.graph();
  auto cache = g.add_input("input.cache", DataType::Float, {{"max_cache", 3}});
  auto pos = g.add_input("pos", DataType::Int64, {{1, 1}});
  auto update = g.add_input("update", DataType::Float, {{1, 3}});
  auto out = g.add_op("ScatterND", {cache, pos, update}, {}, "output.cache");
  g.add_output(out, DataType::Float, {{"max_cache", 3}});
  return mb.build();
}

}  // namespace ingot::exporters::onnx::testing
