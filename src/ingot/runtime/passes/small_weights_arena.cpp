#include "ingot/runtime/passes/small_weights_arena.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "ingot/core/huge_page_arena.h"
#include "ingot/core/huge_pages.h"

namespace ingot::runtime {
namespace {

// The state names the program writes (BUFFER_MUTATION outputs).
std::set<std::string> mutated_buffers(const ExportedProgram& program) {
  std::set<std::string> out;
  for (const OutputSpec& o : program.signature.outputs)
    if (o.kind == OutputKind::BufferMutation) out.insert(o.target);
  return out;
}

bool movable(const Tensor& t) {
  return t.defined() && t.has_storage() && t.storage()->nbytes() < kHugePageBytes &&
         !t.storage()->on_huge_pages();
}

}  // namespace

ExportedProgram SmallWeightsArena::apply(const ExportedProgram& program) {
  ExportedProgram out = program;
  if (!huge_pages_enabled()) return out;
  const std::set<std::string> mutated = mutated_buffers(program);
  std::vector<Tensor*> tensors;  // the tensors to re-point
  for (auto& [name, t] : out.state)
    if (!mutated.contains(name) && movable(t)) tensors.push_back(&t);
  for (auto& [name, t] : out.constants)
    if (movable(t)) tensors.push_back(&t);

  // One mapping sized for the storages no earlier call moved.
  std::vector<Move*> fresh;
  size_t capacity = 0;
  for (const Tensor* t : tensors) {
    auto [it, inserted] = copies_.try_emplace(t->storage().get(), Move{t->storage(), nullptr});
    if (inserted) {
      fresh.push_back(&it->second);
      capacity += HugePageArena::footprint(t->storage()->nbytes());
    }
  }
  if (!fresh.empty()) {
    HugePageArena arena(capacity);
    for (Move* m : fresh) {
      m->copy = arena.allocate(m->source->nbytes());
      std::memcpy(m->copy->data(), m->source->data(), m->source->nbytes());
      moved_bytes_ += int64_t(m->source->nbytes());
    }
  }
  for (Tensor* t : tensors)
    *t = Tensor::from_storage(copies_.at(t->storage().get()).copy, t->dtype(), t->sizes(),
                              t->strides(), t->storage_offset());
  return out;
}

int SmallWeightsArenaPass::run(ExportedProgram& program, const PassTarget&) {
  const int before = arena_.moved();
  program = arena_.apply(program);
  return arena_.moved() - before;
}

}  // namespace ingot::runtime
