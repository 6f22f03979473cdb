#include "ingot/runtime/passes/huge_page_weights.h"

#include <algorithm>
#include <cstring>

#include "ingot/core/huge_pages.h"

namespace ingot::runtime {
namespace {

// Calls fn(offset, bytes) over `source` in chunks, in order, while it returns true,
// dropping each chunk's mapped pages from this process's memory after it: reading a
// mapped weight to copy or compare it never makes more than a chunk of it resident.
// Returns whether every call returned true.
template <typename Fn>
bool for_each_chunk(const Storage& source, Fn&& fn) {
  constexpr size_t kChunk = size_t(32) << 20;
  for (size_t at = 0; at < source.nbytes(); at += kChunk) {
    const size_t bytes = std::min(kChunk, source.nbytes() - at);
    const bool go_on = fn(at, bytes);
    release_mapped_pages(static_cast<const uint8_t*>(source.data()) + at, bytes);
    if (!go_on) return false;
  }
  return true;
}

}  // namespace

Tensor HugePageWeights::moved(const std::string& key, const Tensor& t) {
  if (!t.defined() || !t.has_storage() || !t.storage()->is_mapped()) return t;
  const Storage* source = t.storage().get();
  auto [it, inserted] = copies_.try_emplace(source);
  if (inserted) {
    const auto* from = static_cast<const uint8_t*>(source->data());
    auto named = by_name_.find(key);
    if (named != by_name_.end() && named->second->nbytes() == source->nbytes() &&
        for_each_chunk(*source, [&](size_t at, size_t bytes) {
          return std::memcmp(static_cast<const uint8_t*>(named->second->data()) + at, from + at,
                             bytes) == 0;
        })) {
      it->second = named->second;  // another component's copy of the same weight
      shared_bytes_ += int64_t(source->nbytes());
    } else if (huge_pages_enabled()) {
      // From kHugePageBytes on huge pages, smaller ones on the heap (core/storage.h).
      it->second = Storage::allocate(source->nbytes());
      auto* to = static_cast<uint8_t*>(it->second->data());
      for_each_chunk(*source, [&](size_t at, size_t bytes) {
        std::memcpy(to + at, from + at, bytes);
        return true;
      });
      copied_bytes_ += int64_t(source->nbytes());
    } else {
      it->second = t.storage();  // stays mapped
    }
    by_name_.try_emplace(key, it->second);
    // The replacement stands for the mapped pages: drop them from this process's memory
    // now so the two are never resident together (they stay in the page cache).
    if (it->second.get() != source) release_mapped_pages(source->data(), source->nbytes());
  }
  return Tensor::from_storage(it->second, t.dtype(), t.sizes(), t.strides(), t.storage_offset());
}

ExportedProgram HugePageWeights::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  for (auto& [name, tensor] : out.state) tensor = moved("state " + name, tensor);
  for (auto& [name, tensor] : out.constants) tensor = moved("constant " + name, tensor);
  return out;
}

int HugePageWeightsPass::run(ExportedProgram& program, const PassTarget&) {
  ExportedProgram out = weights_.apply(program);
  int moved = 0;
  for (const auto* tensors : {&program.state, &program.constants}) {
    const auto& after = tensors == &program.state ? out.state : out.constants;
    for (const auto& [name, t] : *tensors) {
      auto it = after.find(name);
      if (t.has_storage() && it != after.end() && it->second.has_storage() &&
          it->second.storage().get() != t.storage().get())
        ++moved;
    }
  }
  program = std::move(out);
  return moved;
}

}  // namespace ingot::runtime
