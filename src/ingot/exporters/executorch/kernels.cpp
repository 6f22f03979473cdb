#include "ingot/exporters/executorch/kernels.h"

#include "ingot/exporters/registry.h"

namespace ingot::exporters::executorch {

namespace {

KeyedRegistry<KernelFn>& table() {
  static KeyedRegistry<KernelFn> t("[executorch]", "kernel mappings");
  return t;
}

KeyedRegistry<SizeBoundsFn>& bounds_table() {
  static KeyedRegistry<SizeBoundsFn> t("[executorch]", "data-dependent size bounds");
  return t;
}

}  // namespace

void register_kernel(const std::string& op, KernelFn fn, std::source_location where) {
  table().add(op, std::move(fn), where);
}

const KernelFn* find_kernel(const std::string& op) {
  return table().find(op);
}

void register_size_bounds(const std::string& op, SizeBoundsFn fn, std::source_location where) {
  bounds_table().add(op, std::move(fn), where);
}

const SizeBoundsFn* find_size_bounds(const std::string& op) {
  return bounds_table().find(op);
}

std::vector<std::string> mapped_ops() {
  return table().keys();
}

}  // namespace ingot::exporters::executorch
