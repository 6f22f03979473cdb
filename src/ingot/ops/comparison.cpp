// Comparisons (eq, ne, lt, le, gt, ge; Tensor and Scalar overloads) and logical
// and / or / not. All produce bool tensors.
#include "ingot/ops/registry.h"
#include "ingot/ops/elementwise_common.h"
#include "ingot/ops/functional/comparison.h"

namespace ingot {
namespace {

// Operands are compared in their promoted dtype; the result is bool.
std::vector<OutputMeta> compare_shape(const OpArgs& a) {
  std::array<Value, 2> operands{a[0], a[1]};
  result_type(operands);  // validates the operands
  return {{DType::Bool, broadcast_args(a)}};
}

template <typename Cmp>
CpuKernel compare_kernel(Cmp cmp) {
  return [cmp](const OpArgs& a, std::span<const Tensor> out) {
    std::array<Value, 2> operands{a[0], a[1]};
    const DType t = result_type(operands);
    const Tensor x = operand_as(a, 0, t), y = operand_as(a, 1, t);
    INGOT_DISPATCH_ALL_TYPES(t, a.name(), [&]<typename T>() {
      binary_loop<T, bool>(out[0], x, y, cmp);
    });
  };
}

template <typename Cmp>
void register_comparison(const char* name, Cmp cmp) {
  OpRegistry::instance().add(
      define_op(fmt::format("{}.Tensor(Tensor self, Tensor other) -> Tensor", name))
          .shape(compare_shape)
          .cpu(compare_kernel(cmp)));
  OpRegistry::instance().add(
      define_op(fmt::format("{}.Scalar(Tensor self, Scalar other) -> Tensor", name))
          .shape(compare_shape)
          .cpu(compare_kernel(cmp)));
}

const bool kComparisonsRegistered = [] {
  register_comparison("eq", [](auto u, auto v) { return u == v; });
  register_comparison("ne", [](auto u, auto v) { return u != v; });
  register_comparison("lt", [](auto u, auto v) { return u < v; });
  register_comparison("le", [](auto u, auto v) { return u <= v; });
  register_comparison("gt", [](auto u, auto v) { return u > v; });
  register_comparison("ge", [](auto u, auto v) { return u >= v; });
  return true;
}();

// --- logical ops: inputs of any dtype are read as truth values -------------------------

std::vector<OutputMeta> logical_binary_shape(const OpArgs& a) {
  return {{DType::Bool, broadcast_args(a)}};
}

template <typename F>
CpuKernel logical_binary_kernel(F f) {
  return [f](const OpArgs& a, std::span<const Tensor> out) {
    const Tensor x = to(a.tensor(0), DType::Bool), y = to(a.tensor(1), DType::Bool);
    cpu::elementwise<bool, bool, bool>(out[0], {&x, &y}, f);
  };
}

const OpRegistrar kLogicalAnd(
    define_op("logical_and(Tensor self, Tensor other) -> Tensor")
        .shape(logical_binary_shape)
        .cpu(logical_binary_kernel([](bool u, bool v) { return u && v; })));
const OpRegistrar kLogicalOr(
    define_op("logical_or(Tensor self, Tensor other) -> Tensor")
        .shape(logical_binary_shape)
        .cpu(logical_binary_kernel([](bool u, bool v) { return u || v; })));
const OpRegistrar kLogicalNot(
    define_op("logical_not(Tensor self) -> Tensor")
        .shape([](const OpArgs& a) {
          return std::vector<OutputMeta>{{DType::Bool, a.tensor(0).sym_sizes()}};
        })
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          const Tensor x = to(a.tensor(0), DType::Bool);
          cpu::elementwise<bool, bool>(out[0], {&x}, [](bool v) { return !v; });
        }));

const OpHandle kEqT("eq.Tensor"), kEqS("eq.Scalar"), kNeT("ne.Tensor"), kNeS("ne.Scalar"),
    kLtT("lt.Tensor"), kLtS("lt.Scalar"), kLeT("le.Tensor"), kLeS("le.Scalar"), kGtT("gt.Tensor"),
    kGtS("gt.Scalar"), kGeT("ge.Tensor"), kGeS("ge.Scalar"), kAnd("logical_and"),
    kOr("logical_or"), kNot("logical_not");

}  // namespace

Tensor eq(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kEqT({s, o})[0];
}
Tensor eq(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kEqS({s, o})[0];
}
Tensor ne(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kNeT({s, o})[0];
}
Tensor ne(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kNeS({s, o})[0];
}
Tensor lt(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kLtT({s, o})[0];
}
Tensor lt(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kLtS({s, o})[0];
}
Tensor le(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kLeT({s, o})[0];
}
Tensor le(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kLeS({s, o})[0];
}
Tensor gt(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kGtT({s, o})[0];
}
Tensor gt(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kGtS({s, o})[0];
}
Tensor ge(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kGeT({s, o})[0];
}
Tensor ge(const Tensor& s, Scalar o, std::source_location where) {
  CallSiteScope call_site(where);
  return kGeS({s, o})[0];
}
Tensor logical_and(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kAnd({s, o})[0];
}
Tensor logical_or(const Tensor& s, const Tensor& o, std::source_location where) {
  CallSiteScope call_site(where);
  return kOr({s, o})[0];
}
Tensor logical_not(const Tensor& s, std::source_location where) {
  CallSiteScope call_site(where);
  return kNot({s})[0];
}

}  // namespace ingot
