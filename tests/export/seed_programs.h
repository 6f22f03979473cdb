// Programs of seed 001 shared by the export tests and the ONNX conformance tests.
#pragma once

#include "ingot/export/pytree.h"
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

}  // namespace ingot::testing

INGOT_PYTREE_DATACLASS(ingot::testing::SeedInput, f, p)
