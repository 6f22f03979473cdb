#include "ingot/runtime/huge_page_weights.h"

#include <cstring>

#include "ingot/core/huge_pages.h"

namespace ingot::runtime {

Tensor HugePageWeights::moved(const Tensor& t) {
  if (!t.defined() || !t.has_storage() || !t.storage()->is_mapped() ||
      t.storage()->nbytes() < kHugePageBytes)
    return t;
  const Storage* source = t.storage().get();
  auto [it, inserted] = copies_.try_emplace(source);
  if (inserted) {
    it->second = Storage::allocate(source->nbytes());  // huge pages (core/storage.h)
    std::memcpy(it->second->data(), source->data(), source->nbytes());
    // The copy replaces the mapped pages: drop them from this process's memory now so
    // the two are never resident together (they stay in the page cache).
    release_mapped_pages(source->data(), source->nbytes());
    copied_bytes_ += int64_t(source->nbytes());
  }
  return Tensor::from_storage(it->second, t.dtype(), t.sizes(), t.strides(),
                              t.storage_offset());
}

ExportedProgram HugePageWeights::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  if (!huge_pages_enabled()) return out;
  for (auto* tensors : {&out.state, &out.constants})
    for (auto& [name, tensor] : *tensors) tensor = moved(tensor);
  return out;
}

}  // namespace ingot::runtime
