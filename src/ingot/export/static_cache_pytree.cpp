#include "ingot/export/static_cache_pytree.h"

#include "ingot/export/control_flow.h"
#include "ingot/export/tracer.h"

namespace ingot {

TreeSpec Pytree<nn::StaticCache>::flatten(const nn::StaticCache& cache, Flattener& f) {
  TreeSpec s{"StaticCache", {}, {}, {}};
  for (const auto& [name, t] : cache.named_tensors()) {
    s.keys.push_back(name);
    s.children.push_back(Pytree<Tensor>::flatten(t, f));
  }
  return s;
}

nn::StaticCache Pytree<nn::StaticCache>::unflatten(const TreeSpec& spec, Unflattener& u) {
  check_spec(spec, "StaticCache", "nn::StaticCache");
  nn::NamedTensors tensors;
  for (size_t i = 0; i < spec.children.size(); ++i) {
    tensors.emplace_back(spec.keys.at(i), Pytree<Tensor>::unflatten(spec.children[i], u));
  }
  return nn::StaticCache::from_named_tensors(tensors);
}

namespace {
// A traced StaticCache cannot read its position: its room checks become runtime asserts
// (batch <= max_batch, position + new_tokens <= max_cache_len), not guards.
const bool kRoomCheckInstalled = [] {
  nn::StaticCache::set_symbolic_room_check([](const nn::StaticCache& cache, const SymInt& batch,
                                              const SymInt& new_tokens) {
    if (!ir::Tracer::current()) {
      // Symbolic shapes outside export (shape-only runs): decide the sizes as guards.
      INGOT_CHECK(
          bool(batch <= cache.max_batch_size()) && bool(new_tokens <= cache.max_cache_len_sym()),
          ValueError, "[StaticCache] {} sequences of {} new tokens do not fit the cache",
          batch.str(), new_tokens.str());
      return;
    }
    check(batch <= cache.max_batch_size());
    SymInt pos = item_int(cache.position());
    check(pos >= SymInt(0));
    check(pos + new_tokens <= cache.max_cache_len_sym());
  });
  return true;
}();
}  // namespace

}  // namespace ingot
