// Custom ops (torch.library.custom_op + register_fake): user kernels that export
// records by name and the runtime calls.
//
//   register_custom_op("mylib::sin(Tensor x) -> Tensor",
//       [](const OpArgs& a) { return std::vector<Tensor>{my_sin(a.tensor(0))}; },
//       [](const OpArgs& a) {   // fake: metadata only, never data
//         return std::vector<OutputMeta>{{a.tensor(0).dtype(), a.tensor(0).sym_sizes()}};
//       });
//   Tensor y = call_custom_op("mylib::sin", {x})[0];
//
// The fake may call new_dynamic_size() (ops/registry.h) for outputs whose size depends
// on data. Without a fake the op runs eagerly but export fails naming it.
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "ingot/ops/registry.h"

namespace ingot {

using CustomKernel = std::function<std::vector<Tensor>(const OpArgs&)>;

// The schema's name must be namespaced ("mylib::name"). Throws ValueError for a bad
// schema or a name already registered.
void register_custom_op(std::string_view schema, CustomKernel kernel, ShapeFn fake = nullptr);

// Calls a registered op by name (custom or built-in).
std::vector<Tensor> call_custom_op(std::string_view name, std::vector<Value> args,
                                   std::source_location where = std::source_location::current());

}  // namespace ingot
