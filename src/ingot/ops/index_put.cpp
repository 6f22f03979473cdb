// index_put / index_put_: the write side of advanced indexing, `self[indices] = values`.
//
// `indices` holds one entry per leading dim of self: an int64/int32 tensor indexing that
// dim, a bool (or uint8) mask covering as many dims as it has, or None for a full slice.
// The integer indices broadcast together to a shape B. The positions written form the
// "indexed shape": B replaces the indexed dims in place when they are adjacent
// (`cache[:, :, pos]` -> [batch, heads, len(pos), head_dim]); otherwise B comes first,
// followed by the remaining dims. `values` broadcasts to the indexed shape. Negative
// indices count from the end. With accumulate, repeated positions add up; without it,
// the last write wins.
//
// Masks select data-dependent counts, so with a mask the values shape is checked in the
// kernel; otherwise the shape function checks it.
#include <cstring>

#include "ingot/ops/cpu/copy.h"
#include "ingot/ops/functional/indexing.h"
#include "ingot/ops/index_utils.h"
#include "ingot/ops/registry.h"
#include "ingot/ops/shape_utils.h"

namespace ingot {
namespace {

bool is_mask(const Tensor& t) {
  return t.dtype() == DType::Bool || t.dtype() == DType::U8;
}

// Where the broadcast index block B goes in the indexed shape, given which self dims are
// indexed: the first indexed dim when all indexed dims are adjacent, else 0.
int64_t block_position(const std::vector<bool>& indexed) {
  int64_t first = -1, last = -1;
  for (size_t d = 0; d < indexed.size(); ++d) {
    if (!indexed[d]) continue;
    if (first < 0) first = int64_t(d);
    last = int64_t(d);
  }
  if (first < 0) return 0;
  for (int64_t d = first; d <= last; ++d) {
    if (!indexed[size_t(d)]) return 0;
  }
  return first;
}

// The indexed shape: self's non-indexed dims with B inserted at block_position.
template <typename S>
std::vector<S> indexed_shape(const std::vector<S>& self_sizes, const std::vector<bool>& indexed,
                             const std::vector<S>& block) {
  std::vector<S> rest;
  const int64_t pos = block_position(indexed);
  int64_t rest_before = 0;
  for (size_t d = 0; d < self_sizes.size(); ++d) {
    if (indexed[d]) continue;
    if (int64_t(d) < pos) ++rest_before;
    rest.push_back(self_sizes[d]);
  }
  rest.insert(rest.begin() + rest_before, block.begin(), block.end());
  return rest;
}

template <typename S>
std::string shape_text(const std::vector<S>& s) {
  return shape_str(s);
}

// Checks values broadcasts to `target`; throws ShapeError naming the op.
template <typename S>
void check_values_shape(const Tensor& values, const std::vector<S>& target, std::string_view op) {
  bool ok = values.dim() <= int64_t(target.size());
  for (int64_t i = 0; ok && i < values.dim(); ++i) {
    const SymInt& v = values.sym_size(values.dim() - 1 - i);
    const SymInt t = target[target.size() - 1 - size_t(i)];
    ok = v.maybe_int() == 1 || bool(v == t);
  }
  INGOT_CHECK(ok, ShapeError,
              "[{}] shape mismatch: values of shape {} cannot be broadcast to the indexing "
              "result of shape {}",
              op, values.shape_string(), shape_text(target));
}

std::vector<OutputMeta> index_put_shape(const OpArgs& a) {
  const Tensor& self = a.tensor(0);
  const TensorList& indices = a.tensor_list(1);
  const Tensor& values = a.tensor(2);
  INGOT_CHECK(values.dtype() == self.dtype(), DTypeError,
              "[{}] values dtype {} must equal self dtype {} (convert values first)", a.name(),
              values.dtype(), self.dtype());
  std::vector<bool> indexed(size_t(self.dim()), false);
  int64_t consumed = 0;
  bool has_mask = false, has_block = false;
  Shape block;
  for (size_t i = 0; i < indices.size(); ++i) {
    const Tensor& idx = indices[i];
    if (!idx.defined()) {
      ++consumed;
      continue;
    }
    check_index_dtype(idx, a.name(), fmt::format("indices[{}]", i), /*allow_mask=*/true);
    const int64_t covers = is_mask(idx) ? idx.dim() : 1;
    INGOT_CHECK(!is_mask(idx) || idx.dim() > 0, NotSupportedError,
                "[{}] a 0-d bool mask (indices[{}]) is not supported", a.name(), i);
    INGOT_CHECK(consumed + covers <= self.dim(), ShapeError,
                "[{}] too many indices for a tensor of rank {} (shape {})", a.name(), self.dim(),
                self.shape_string());
    if (is_mask(idx)) {
      has_mask = true;
      for (int64_t j = 0; j < idx.dim(); ++j) {
        INGOT_CHECK(bool(idx.sym_size(j) == self.sym_size(consumed + j)), ShapeError,
                    "[{}] the mask indices[{}] of shape {} does not match self {} at dim {}",
                    a.name(), i, idx.shape_string(), self.shape_string(), consumed + j);
      }
    } else {
      block = has_block ? broadcast_shapes(block, idx.sym_sizes(), a.name()) : idx.sym_sizes();
      has_block = true;
    }
    for (int64_t j = 0; j < covers; ++j) indexed[size_t(consumed + j)] = true;
    consumed += covers;
  }
  INGOT_CHECK(consumed <= self.dim(), ShapeError,
              "[{}] too many indices ({}) for a tensor of rank {} (shape {})", a.name(), consumed,
              self.dim(), self.shape_string());
  if (!has_mask)
    check_values_shape(values, indexed_shape(self.sym_sizes(), indexed, block), a.name());
  return {OutputMeta{self.dtype(), self.sym_sizes()}};
}

// Replaces each mask by one int64 index tensor per dim it covers: the coordinates of its
// non-zero elements, in row-major order. Returns one entry per self dim.
std::vector<Tensor> expand_masks(const Tensor& self, const TensorList& indices) {
  std::vector<Tensor> per_dim(size_t(self.dim()));
  int64_t d = 0;
  for (const Tensor& idx : indices) {
    if (!idx.defined()) {
      ++d;
      continue;
    }
    if (!is_mask(idx)) {
      per_dim[size_t(d++)] = idx;
      continue;
    }
    const IntShape ms = idx.sizes();
    Tensor flags = Tensor::empty(ms, DType::Bool);
    cpu::copy_cast(flags, idx);
    const bool* f = flags.data<bool>();
    std::vector<std::vector<int64_t>> coords(ms.size());
    IntShape pos(ms.size(), 0);
    for (int64_t k = 0, n = flags.numel(); k < n; ++k) {
      if (f[k]) {
        for (size_t j = 0; j < ms.size(); ++j) coords[j].push_back(pos[j]);
      }
      for (size_t j = ms.size(); j-- > 0;) {
        if (++pos[j] < ms[j]) break;
        pos[j] = 0;
      }
    }
    for (size_t j = 0; j < ms.size(); ++j) {
      const int64_t count = int64_t(coords[j].size());
      per_dim[size_t(d++)] = Tensor::from_vector<int64_t>(coords[j], {count});
    }
  }
  return per_dim;
}

// Strides (in elements) that view `t` broadcast to `target` (aligned at the right).
IntShape broadcast_strides(const Tensor& t, const IntShape& target) {
  IntShape s(target.size(), 0);
  for (int64_t i = 0; i < t.dim(); ++i) {
    const size_t od = target.size() - size_t(t.dim()) + size_t(i);
    s[od] = t.size(i) == 1 ? 0 : t.stride(i);
  }
  return s;
}

// One dim of the write loop: a plain dim of self (strides in elements), or the index
// block, whose offsets come from tables.
struct LoopDim {
  int64_t size;
  int64_t self_stride = 0, value_stride = 0;
  bool is_block = false;
};

void index_put_into(const Tensor& out, const OpArgs& a) {
  const std::string& op = a.name();
  const bool accumulate = a.boolean(3);
  std::vector<Tensor> per_dim = expand_masks(out, a.tensor_list(1));
  const IntShape self_sizes = out.sizes();

  std::vector<bool> indexed(per_dim.size(), false);
  IntShape block;
  bool has_block = false;
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!per_dim[d].defined()) continue;
    indexed[d] = true;
    Shape b = has_block ? broadcast_shapes(to_sym_shape(block), per_dim[d].sym_sizes(), op)
                        : per_dim[d].sym_sizes();
    block = to_int_shape(b);
    has_block = true;
  }
  const int64_t block_numel = shape_numel(block);

  // self offset of every block position: sum over indexed dims of index * stride. All
  // indices are read and checked before anything is written.
  std::vector<int64_t> self_base(size_t(block_numel), 0);
  for (size_t d = 0; d < per_dim.size(); ++d) {
    if (!indexed[d]) continue;
    const Tensor& idx = per_dim[d];
    Tensor view = idx.as_strided(block, broadcast_strides(idx, block), idx.storage_offset());
    auto vals = read_indices(view, self_sizes[d], int64_t(d), op, /*wrap=*/true);
    for (int64_t b = 0; b < block_numel; ++b)
      self_base[size_t(b)] += vals[size_t(b)] * out.stride(int64_t(d));
  }

  const IntShape target = indexed_shape(self_sizes, indexed, block);
  Tensor values = a.tensor(2);
  check_values_shape(values, target, op);
  if (shape_numel(target) == 0) return;
  if (values.shares_storage_with(out)) {  // in place with aliasing values: snapshot them
    Tensor c = Tensor::empty(values.sizes(), values.dtype());
    cpu::copy_cast(c, values);
    values = c;
  }
  const IntShape vstrides = broadcast_strides(values, target);

  // The loop dims, in indexed-shape order; the block is one dim of block_numel.
  const int64_t block_pos = block_position(indexed);
  int64_t rest_before = 0;
  std::vector<int64_t> rest_dims;
  for (size_t d = 0; d < self_sizes.size(); ++d) {
    if (indexed[d]) continue;
    if (int64_t(d) < block_pos) ++rest_before;
    rest_dims.push_back(int64_t(d));
  }
  std::vector<LoopDim> dims;
  size_t t = 0;  // position in target
  std::vector<int64_t> value_base(size_t(block_numel), 0);
  for (size_t r = 0; r <= rest_dims.size(); ++r) {
    if (int64_t(r) == rest_before) {
      // Values offset of every block position, from the values strides of B's dims.
      for (int64_t b = 0; b < block_numel; ++b) {
        int64_t rem = b, off = 0;
        for (size_t j = block.size(); j-- > 0;) {
          off += (rem % block[j]) * vstrides[t + j];
          rem /= block[j];
        }
        value_base[size_t(b)] = off;
      }
      dims.push_back(LoopDim{block_numel, 0, 0, true});
      t += block.size();
    }
    if (r < rest_dims.size()) {
      const int64_t d = rest_dims[r];
      dims.push_back(LoopDim{self_sizes[size_t(d)], out.stride(d), vstrides[t], false});
      ++t;
    }
  }

  const LoopDim inner = dims.back();
  int64_t outer_count = 1;
  for (size_t i = 0; i + 1 < dims.size(); ++i) outer_count *= dims[i].size;
  const size_t item = itemsize(out.dtype());
  char* self_ptr = static_cast<char*>(out.raw_data());
  const char* value_ptr = static_cast<const char*>(values.raw_data());

  // Calls row(self_offset, value_offset) for each outer position (offsets in elements).
  auto for_each_row = [&](auto&& row) {
    for (int64_t o = 0; o < outer_count; ++o) {
      int64_t rem = o, so = 0, vo = 0;
      for (size_t i = dims.size() - 1; i-- > 0;) {
        const int64_t c = rem % dims[i].size;
        rem /= dims[i].size;
        if (dims[i].is_block) {
          so += self_base[size_t(c)];
          vo += value_base[size_t(c)];
        } else {
          so += c * dims[i].self_stride;
          vo += c * dims[i].value_stride;
        }
      }
      row(so, vo);
    }
  };
  auto inner_offsets = [&](int64_t j, int64_t& so, int64_t& vo) {
    if (inner.is_block) {
      so = self_base[size_t(j)];
      vo = value_base[size_t(j)];
    } else {
      so = j * inner.self_stride;
      vo = j * inner.value_stride;
    }
  };

  if (!accumulate) {
    const bool rows_contiguous =
        !inner.is_block && inner.self_stride == 1 && inner.value_stride == 1;
    dispatch_by_size(item, [&]<typename U>() {
      U* s = reinterpret_cast<U*>(self_ptr);
      const U* v = reinterpret_cast<const U*>(value_ptr);
      for_each_row([&](int64_t so, int64_t vo) {
        if (rows_contiguous) {
          std::memcpy(s + so, v + vo, size_t(inner.size) * sizeof(U));
          return;
        }
        for (int64_t j = 0; j < inner.size; ++j) {
          int64_t sj, vj;
          inner_offsets(j, sj, vj);
          s[so + sj] = v[vo + vj];
        }
      });
    });
    return;
  }
  INGOT_DISPATCH_ALL_TYPES(out.dtype(), op, [&]<typename T>() {
    T* s = reinterpret_cast<T*>(self_ptr);
    const T* v = reinterpret_cast<const T*>(value_ptr);
    for_each_row([&](int64_t so, int64_t vo) {
      for (int64_t j = 0; j < inner.size; ++j) {
        int64_t sj, vj;
        inner_offsets(j, sj, vj);
        T& dst = s[so + sj];
        if constexpr (std::is_same_v<T, bool>)
          dst = dst || v[vo + vj];
        else
          dst = T(opmath_t<T>(dst) + opmath_t<T>(v[vo + vj]));
      }
    });
  });
}

const OpRegistrar kIndexPut(
    define_op("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) "
              "-> Tensor")
        .shape(index_put_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) {
          cpu::copy_cast(out[0], a.tensor(0));
          index_put_into(out[0], a);
        }));
const OpRegistrar kIndexPutInplace(
    define_op("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
              "bool accumulate=False) -> Tensor(a!)")
        .shape(index_put_shape)
        .cpu([](const OpArgs& a, std::span<const Tensor> out) { index_put_into(out[0], a); }));

const OpHandle kIndexPutOp("index_put"), kIndexPutInplaceOp("index_put_");

TensorList to_list(const std::vector<std::optional<Tensor>>& indices) {
  TensorList l;
  l.reserve(indices.size());
  for (const auto& i : indices) l.push_back(i ? *i : Tensor());
  return l;
}

}  // namespace

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate, std::source_location where) {
  CallSiteScope call_site(where);
  return kIndexPutOp({self, to_list(indices), values, accumulate})[0];
}
Tensor index_put_(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                  const Tensor& values, bool accumulate, std::source_location where) {
  CallSiteScope call_site(where);
  return kIndexPutInplaceOp({self, to_list(indices), values, accumulate})[0];
}

}  // namespace ingot
