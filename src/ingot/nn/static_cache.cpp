#include "ingot/nn/static_cache.h"

#include <map>

#include "ingot/ops/functional.h"

namespace ingot::nn {
namespace {

StaticCache::SymbolicRoomCheck& symbolic_room_check() {
  static StaticCache::SymbolicRoomCheck check;
  return check;
}

// True when a and b are provably different (symbolic sizes that might be equal pass).
bool differ(const SymInt& a, const SymInt& b) {
  return (a != b).maybe_bool().value_or(false);
}

}  // namespace

void StaticCache::set_symbolic_room_check(SymbolicRoomCheck check) {
  symbolic_room_check() = std::move(check);
}

StaticCache::StaticCache(const CacheSpec& spec, int64_t max_batch_size, int64_t max_cache_len) {
  INGOT_CHECK(spec.num_layers > 0 && spec.num_kv_heads > 0 && spec.head_dim > 0, ValueError,
              "[StaticCache] needs positive layers, kv heads and head_dim, got {}, {}, {}",
              spec.num_layers, spec.num_kv_heads, spec.head_dim);
  INGOT_CHECK(max_batch_size > 0 && max_cache_len > 0, ValueError,
              "[StaticCache] max_batch_size ({}) and max_cache_len ({}) must be positive",
              max_batch_size, max_cache_len);
  const IntShape shape{max_batch_size, spec.num_kv_heads, max_cache_len, spec.head_dim};
  for (int64_t i = 0; i < spec.num_layers; ++i) {
    keys_.push_back(Tensor::empty(shape, spec.dtype, /*zero_fill=*/true));
    values_.push_back(Tensor::empty(shape, spec.dtype, /*zero_fill=*/true));
  }
  position_ = Tensor::scalar<int64_t>(0);
}

StaticCache::StaticCache(std::vector<Tensor> keys, std::vector<Tensor> values, Tensor position)
    : keys_(std::move(keys)), values_(std::move(values)), position_(std::move(position)) {
  INGOT_CHECK(!keys_.empty() && keys_.size() == values_.size(), ValueError,
              "[StaticCache] needs one key and one value tensor per layer, got {} and {}",
              keys_.size(), values_.size());
  INGOT_CHECK(position_.defined() && position_.dim() == 0 && position_.dtype() == DType::I64,
              ValueError, "[StaticCache] cache_position must be a 0-d int64 tensor, got {}",
              position_.defined()
                  ? fmt::format("{} {}", position_.dtype(), position_.shape_string())
                  : "nothing");
  const Tensor& first = keys_[0];
  for (size_t i = 0; i < keys_.size(); ++i) {
    for (const auto& [name, t] : {std::pair{"key_cache", keys_[i]}, {"value_cache", values_[i]}}) {
      INGOT_CHECK(
          t.defined() && t.dim() == 4, ShapeError,
          "[StaticCache] {}.{} must be [max_batch, kv_heads, max_cache_len, head_dim], got {}",
          name, i, t.defined() ? t.shape_string() : "nothing");
      INGOT_CHECK(!differ(t.sym_size(0), first.sym_size(0)) &&
                      !differ(t.sym_size(2), first.sym_size(2)) && t.dtype() == first.dtype(),
                  ShapeError,
                  "[StaticCache] {}.{} is {} {}; every layer needs the batch, length and dtype of "
                  "key_cache.0 ({} {})",
                  name, i, t.dtype(), t.shape_string(), first.dtype(), first.shape_string());
    }
  }
}

StaticCache StaticCache::from_named_tensors(const NamedTensors& tensors) {
  std::map<size_t, Tensor> keys, values;
  Tensor position;
  for (const auto& [name, t] : tensors) {
    auto layer_of = [&](const std::string& prefix) -> std::optional<size_t> {
      if (name.rfind(prefix, 0) != 0) return std::nullopt;
      const std::string digits = name.substr(prefix.size());
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
      return size_t(std::stoul(digits));
    };
    if (name == "cache_position") {
      position = t;
    } else if (auto k = layer_of("key_cache.")) {
      keys[*k] = t;
    } else if (auto v = layer_of("value_cache.")) {
      values[*v] = t;
    } else {
      INGOT_THROW(ValueError,
                  "[StaticCache] unknown tensor '{}' (expected key_cache.N, value_cache.N, "
                  "cache_position)",
                  name);
    }
  }
  INGOT_CHECK(position.defined(), ValueError, "[StaticCache] 'cache_position' is missing");
  std::vector<Tensor> k_list, v_list;
  for (size_t i = 0; i < std::max(keys.size(), values.size()); ++i) {
    INGOT_CHECK(keys.contains(i) && values.contains(i), ValueError,
                "[StaticCache] layer {}: 'key_cache.{}' or 'value_cache.{}' is missing", i, i, i);
    k_list.push_back(keys[i]);
    v_list.push_back(values[i]);
  }
  INGOT_CHECK(keys.size() == values.size(), ValueError,
              "[StaticCache] {} key_cache tensors but {} value_cache tensors", keys.size(),
              values.size());
  return StaticCache(std::move(k_list), std::move(v_list), std::move(position));
}

void StaticCache::check_room(const SymInt& batch, const SymInt& new_tokens) const {
  // Traced (no data in the position): the installed check owns all three conditions, so
  // none becomes a guard of the trace.
  if (!position_.has_storage() && symbolic_room_check()) {
    symbolic_room_check()(*this, batch, new_tokens);
    return;
  }
  const SymInt max_batch = max_batch_size(), max_len = max_cache_len_sym();
  INGOT_CHECK((batch <= max_batch).guard_bool(), ValueError,
              "[StaticCache] a batch of {} sequences does not fit a cache allocated for {}; "
              "allocate the StaticCache with max_batch_size >= {}",
              batch.str(), max_batch.str(), batch.str());
  INGOT_CHECK((new_tokens <= max_len).guard_bool(), ValueError,
              "[StaticCache] {} new tokens do not fit a cache of max_cache_len {}; allocate a "
              "larger cache",
              new_tokens.str(), max_len.str());
  if (!position_.has_storage()) return;
  const int64_t pos = position_.item<int64_t>();
  const int64_t len = max_len.expect_int(), n = new_tokens.expect_int();
  INGOT_CHECK(pos >= 0 && pos <= len, ValueError,
              "[StaticCache] cache_position {} is outside [0, max_cache_len {}]: the cache "
              "state is corrupt; reset() it",
              pos, len);
  INGOT_CHECK(pos + n <= len, ValueError,
              "[StaticCache] cache full: {} tokens are cached and {} more do not fit "
              "max_cache_len {}; reset() the cache or allocate a larger max_cache_len",
              pos, n, len);
}

Tensor StaticCache::new_positions(const SymInt& new_tokens) const {
  return add(arange_symint(new_tokens), position_);  // [new_tokens]
}

std::pair<Tensor, Tensor> StaticCache::update(size_t layer, const Tensor& k, const Tensor& v) {
  INGOT_CHECK(layer < keys_.size(), ValueError,
              "[StaticCache] layer {} is out of range: the cache has {} layers", layer,
              keys_.size());
  INGOT_CHECK(k.dim() == 4 && v.dim() == 4, ShapeError,
              "[StaticCache] k and v must be [batch, kv_heads, new_tokens, head_dim], got {} "
              "and {}",
              k.shape_string(), v.shape_string());
  const SymInt batch = k.sym_size(0), q = k.sym_size(2);
  if (layer == 0) check_room(batch, q);
  Tensor keys = keys_[layer], values = values_[layer];  // [B, h, L, d]
  if (!(batch == max_batch_size()).maybe_bool().value_or(false)) {
    keys = narrow(keys, 0, 0, batch);  // rows [0, batch): still the cache's storage
    values = narrow(values, 0, 0, batch);
  }
  Tensor slots = new_positions(q);  // [q] int64
  index_copy_(keys, 2, slots, k);
  index_copy_(values, 2, slots, v);
  if (layer + 1 == keys_.size()) copy_(position_, add(select(slots, 0, -1), 1));
  return {keys, values};
}

int64_t StaticCache::seq_length() const {
  INGOT_CHECK(position_.has_storage(), ValueError,
              "[StaticCache] seq_length() reads cache_position, which a traced cache does not "
              "have; use new_positions()");
  return position_.item<int64_t>();
}

void StaticCache::reset() {
  copy_(position_, zeros_symint({}, DType::I64));
}

void StaticCache::check_compatible(const CacheSpec& spec) const {
  INGOT_CHECK(int64_t(keys_.size()) == spec.num_layers, ValueError,
              "[StaticCache] has {} layers but the model has {}; build it from the model's "
              "cache spec",
              keys_.size(), spec.num_layers);
  for (size_t i = 0; i < keys_.size(); ++i) {
    for (const Tensor* t : {&keys_[i], &values_[i]}) {
      INGOT_CHECK(!differ(t->sym_size(1), spec.num_kv_heads) &&
                      !differ(t->sym_size(3), spec.head_dim) && t->dtype() == spec.dtype,
                  ValueError,
                  "[StaticCache] layer {} is {} {}; the model needs {} kv heads of size {} in {}",
                  i, t->dtype(), t->shape_string(), spec.num_kv_heads, spec.head_dim, spec.dtype);
    }
  }
}

NamedTensors StaticCache::named_tensors() const {
  NamedTensors out;
  for (size_t i = 0; i < keys_.size(); ++i) {
    out.emplace_back("key_cache." + std::to_string(i), keys_[i]);
    out.emplace_back("value_cache." + std::to_string(i), values_[i]);
  }
  out.emplace_back("cache_position", position_);
  return out;
}

}  // namespace ingot::nn
