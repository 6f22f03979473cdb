// Small exported programs that cover what the .ingot archive stores: folded statics, an
// optional input, cond subgraphs, parameters with mutated buffers, a lifted constant,
// named and AUTO dynamic dims. Shared by the archive tests and the fuzz-corpus writer.
#pragma once

#include <map>
#include <string>

#include "export_test_util.h"
#include "ingot/export/control_flow.h"
#include "ingot/export/export.h"
#include "ingot/nn/module.h"
#include "ingot/ops/functional.h"

namespace ingot::testing {

// y + 7 with y = 3 is folded into add(x, 10).
struct ArchiveAddStatic : nn::Module {
  ArchiveAddStatic() : Module("ArchiveAddStatic") {}
  Tensor forward(const Tensor& x, int y) { return add(x, Scalar(y + 7)); }
};

struct ArchiveOptional : nn::Module {
  ArchiveOptional() : Module("ArchiveOptional") {}
  Tensor forward(const Tensor& x, const std::optional<Tensor>& y) {
    if (y) return mul(*y, x);
    return add(x, x);
  }
};

struct ArchiveCond : nn::Module {
  ArchiveCond() : Module("ArchiveCond") {}
  Tensor forward(const Tensor& x) {
    return cond(
        gt(sum(x), Scalar(0)), [](const TensorList& in) { return TensorList{sin(in[0])}; },
        [](const TensorList& in) { return TensorList{mul(cos(in[0]), Scalar(-2.5))}; }, {x})[0];
  }
};

// Parameters read, a counter buffer advanced by add_ and a buffer overwritten by copy_.
struct ArchiveStateful : nn::Module {
  Tensor* weight;
  Tensor* bias;
  Tensor* steps;
  Tensor* last;
  ArchiveStateful() : Module("ArchiveStateful") {
    weight = register_parameter("weight", rand_tensor({4, 3}, 11));
    bias = register_parameter("bias", rand_tensor({4}, 12));
    steps = register_buffer("steps", zeros({1}));
    last = register_buffer("last", zeros({2, 4}));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = linear(x, *weight, *bias);  // [2, 4]
    add_(*steps, Scalar(1));
    copy_(*last, y);
    return add(y, *steps);
  }
};

// A dim shared by two inputs (named Dim) and a derived size 2*batch.
struct ArchiveDynamic : nn::Module {
  ArchiveDynamic() : Module("ArchiveDynamic") {}
  Tensor forward(const Tensor& x, const Tensor& y) {
    Tensor z = cat({x, y}, 0);  // [2*batch, 8]
    return mul(z, Scalar(0.5));
  }
};

// A data-dependent size (item -> unbacked symbol u0) with checks that become asserts.
struct ArchiveDataDependent : nn::Module {
  ArchiveDataDependent() : Module("ArchiveDataDependent") {}
  Tensor forward(const Tensor& x, const Tensor& n) {
    SymInt k = item_int(n);
    check_is_size(k);
    check(k <= SymInt(16) && k * 2 != SymInt(6));
    Tensor filled = full_symint({k}, Scalar(2.0));  // [u0]
    return add(x, sum(filled));
  }
};

// map over rows and a while_loop doubling an accumulator.
struct ArchiveLoops : nn::Module {
  ArchiveLoops() : Module("ArchiveLoops") {}
  Tensor forward(const Tensor& xs, const Tensor& w) {
    Tensor mapped =
        map([](const TensorList& in) { return TensorList{mul(in[0], in[1])}; }, {xs}, {w})[0];
    TensorList done =
        while_loop([](const TensorList& c) { return TensorList{lt(c[0], Scalar(3))}; },
                   [](const TensorList& c) {
                     return TensorList{add(c[0], Scalar(1)), add(c[1], c[1])};
                   },
                   {zeros({}, DType::I64), mapped});
    return done[1];
  }
};

// Every program above, exported, by name.
inline std::map<std::string, ExportedProgram> archive_programs() {
  std::map<std::string, ExportedProgram> out;
  ExportOptions named;
  named.input_names = {"x", "y"};
  {
    ArchiveAddStatic m;
    out.emplace("add_static", export_(m, std::tuple{rand_tensor({1}, 1), 3}, named));
  }
  {
    ArchiveOptional m;
    Tensor x = rand_tensor({3, 3}, 2), y = rand_tensor({3, 3}, 3);
    out.emplace("optional_passed", export_(m, std::tuple{x, std::optional<Tensor>(y)}, named));
    out.emplace("optional_none", export_(m, std::tuple{x, std::optional<Tensor>()}, named));
  }
  {
    ArchiveCond m;
    out.emplace("cond", export_(m, std::tuple{rand_tensor({3}, 4)}));
  }
  {
    ArchiveStateful m;
    out.emplace("stateful", export_(m, std::tuple{rand_tensor({2, 3}, 5)}));
  }
  {
    // A free function: the captured tensor becomes a lifted constant.
    Tensor scale = rand_tensor({5}, 6);
    auto fn = [scale](const Tensor& x) { return mul(x, scale); };
    out.emplace("constant", export_(nullptr, fn, std::tuple{rand_tensor({5}, 7)}));
  }
  {
    ArchiveDynamic m;
    Dim batch("batch", 1, 64);
    ExportOptions o = named;
    o.dynamic_shapes = DynamicShapes::tuple(
        {DynamicShapes::tensor({{0, batch}}), DynamicShapes::tensor({{0, batch}})});
    out.emplace("dynamic",
                export_(m, std::tuple{rand_tensor({3, 8}, 8), rand_tensor({3, 8}, 9)}, o));
  }
  {
    ArchiveDynamic m;
    ExportOptions o = named;
    o.dynamic = true;
    out.emplace("dynamic_auto",
                export_(m, std::tuple{rand_tensor({3, 8}, 8), rand_tensor({3, 8}, 9)}, o));
  }
  {
    ArchiveDataDependent m;
    out.emplace("data_dependent",
                export_(m, std::tuple{rand_tensor({4}, 10), Tensor::scalar<int64_t>(5)}, named));
  }
  {
    ArchiveLoops m;
    out.emplace("loops", export_(m, std::tuple{rand_tensor({3, 4}, 13), rand_tensor({4}, 14)}));
  }
  return out;
}

}  // namespace ingot::testing
