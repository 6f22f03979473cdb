#include "ingot/core/tensor.h"

#include <sstream>

namespace ingot {

IntShape contiguous_strides(const IntShape& sizes) {
  IntShape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

std::string shape_str(const Shape& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += sizes[i].str();
  }
  return out + "]";
}

std::string shape_str(const IntShape& sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

IntShape to_int_shape(const Shape& sizes) {
  IntShape out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) out[i] = sizes[i].expect_int();
  return out;
}

Shape to_sym_shape(const IntShape& sizes) { return Shape(sizes.begin(), sizes.end()); }

int64_t shape_numel(const IntShape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

TensorImpl& Tensor::impl() const {
  INGOT_CHECK(impl_ != nullptr, ValueError, "[Tensor] use of an undefined tensor");
  return *impl_;
}

Tensor Tensor::empty(const IntShape& sizes, DType dtype, bool zero_fill) {
  for (size_t i = 0; i < sizes.size(); ++i) {
    INGOT_CHECK(sizes[i] >= 0, ValueError, "[empty] negative size {} in dim {} of {}",
                sizes[i], i, shape_str(sizes));
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->sizes = to_sym_shape(sizes);
  impl->strides = contiguous_strides(sizes);
  impl->storage = Storage::allocate(size_t(shape_numel(sizes)) * itemsize(dtype), zero_fill);
  return Tensor(std::move(impl));
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, DType dtype,
                            const IntShape& sizes, const IntShape& strides,
                            int64_t storage_offset) {
  INGOT_CHECK(sizes.size() == strides.size(), ShapeError,
              "[from_storage] sizes {} and strides {} differ in rank", shape_str(sizes),
              shape_str(strides));
  INGOT_CHECK(storage_offset >= 0, ValueError, "[from_storage] negative storage offset {}",
              storage_offset);
  // The furthest element reached must lie inside the storage.
  int64_t lo = storage_offset, hi = storage_offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    INGOT_CHECK(sizes[i] >= 0, ValueError, "[from_storage] negative size in {}", shape_str(sizes));
    if (sizes[i] == 0) empty = true;
    int64_t reach = (sizes[i] - 1) * strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  if (!empty) {
    INGOT_CHECK(lo >= 0 && size_t(hi + 1) * itemsize(dtype) <= storage->nbytes(), ShapeError,
                "[from_storage] view sizes {} strides {} offset {} reaches outside a storage "
                "of {} bytes",
                shape_str(sizes), shape_str(strides), storage_offset, storage->nbytes());
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->sizes = to_sym_shape(sizes);
  impl->strides = strides;
  impl->storage_offset = storage_offset;
  impl->storage = std::move(storage);
  return Tensor(std::move(impl));
}

Tensor Tensor::meta(DType dtype, Shape sizes, std::shared_ptr<TensorAnnotation> annotation) {
  auto impl = std::make_shared<TensorImpl>();
  impl->dtype = dtype;
  impl->sizes = std::move(sizes);
  impl->annotation = std::move(annotation);
  return Tensor(std::move(impl));
}

Tensor Tensor::as_strided(const IntShape& sizes, const IntShape& strides,
                          int64_t storage_offset) const {
  INGOT_CHECK(has_storage(), ValueError, "[as_strided] tensor has no storage");
  return from_storage(storage(), dtype(), sizes, strides, storage_offset);
}

const SymInt& Tensor::sym_size(int64_t d, std::source_location where) const {
  note_user_location(where);
  return impl().sizes[size_t(wrap_dim(d, "size"))];
}

IntShape Tensor::sizes() const { return to_int_shape(impl().sizes); }

int64_t Tensor::stride(int64_t d) const {
  INGOT_CHECK(has_storage(), ValueError, "[stride] tensor has no storage");
  return impl().strides[size_t(wrap_dim(d, "stride"))];
}

int64_t Tensor::numel() const {
  // Plain sizes (every size at run time) multiply as ints; a symbolic size goes through
  // sym_numel, whose expect_int names it in the error.
  int64_t n = 1;
  for (const auto& s : impl().sizes) {
    if (s.is_symbolic()) return sym_numel().expect_int();
    n *= s.expect_int();
  }
  return n;
}

SymInt Tensor::sym_numel() const {
  SymInt n = 1;
  for (const auto& s : impl().sizes) n = n * s;
  return n;
}

bool Tensor::is_contiguous() const {
  if (!has_storage()) return true;
  const auto& st = impl().strides;
  int64_t expected = 1;
  for (size_t i = st.size(); i-- > 0;) {
    int64_t s = impl().sizes[i].expect_int();
    if (s == 0) return true;
    if (s != 1 && st[i] != expected) return false;
    expected *= s;
  }
  return true;
}

int64_t Tensor::wrap_dim(int64_t d, const char* op) const {
  int64_t n = dim();
  // A 0-d tensor accepts dim 0 / -1, as in PyTorch.
  int64_t bound = std::max<int64_t>(n, 1);
  INGOT_CHECK(d >= -bound && d < bound, ValueError,
              "[{}] dim {} is out of range for a tensor of rank {} (shape {}); expected a dim "
              "in [{}, {}]",
              op, d, n, shape_str(impl().sizes), -bound, bound - 1);
  return d < 0 ? d + bound : d;
}

bool Tensor::shares_storage_with(const Tensor& o) const {
  return has_storage() && o.has_storage() && storage() == o.storage();
}

void* Tensor::raw_data() const {
  INGOT_CHECK(has_storage(), ValueError,
              "[Tensor] tensor of shape {} has no data (a traced tensor during export?)",
              shape_str(impl().sizes));
  return static_cast<uint8_t*>(impl().storage->data()) +
         impl().storage_offset * int64_t(itemsize(impl().dtype));
}

void Tensor::check_writable(const char* op) const {
  INGOT_CHECK(storage()->writable(), ValueError,
              "[{}] cannot write to a read-only tensor (memory-mapped weights); clone() it first",
              op);
}

void Tensor::check_dtype(DType expected, const char* what) const {
  INGOT_CHECK(dtype() == expected, DTypeError, "[{}] tensor has dtype {}, accessed as {}", what,
              dtype(), expected);
}

template <typename T>
T Tensor::item() const {
  INGOT_CHECK(numel() == 1, ValueError,
              "[item] a tensor with {} elements (shape {}) cannot be converted to a scalar",
              numel(), shape_string());
  return INGOT_DISPATCH_ALL_TYPES(dtype(), "item", [&]<typename S>() -> T {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
      return static_cast<T>(float(*static_cast<const S*>(raw_data())));
    } else {
      return static_cast<T>(*static_cast<const S*>(raw_data()));
    }
  });
}
template bool Tensor::item<bool>() const;
template int64_t Tensor::item<int64_t>() const;
template int32_t Tensor::item<int32_t>() const;
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;

std::string Tensor::shape_string() const { return ingot::shape_str(impl().sizes); }

std::string Tensor::to_string(int64_t max_elements) const {
  std::string out = fmt::format("Tensor({}, {}", dtype(), shape_string());
  if (!has_storage()) return out + ", no data)";
  int64_t n = numel();
  if (n > max_elements) return out + ")";
  // Walk elements in logical (row-major) order through the strides.
  IntShape sz = sizes();
  IntShape idx(sz.size(), 0);
  out += ", [";
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = storage_offset();
    for (size_t d = 0; d < sz.size(); ++d) off += idx[d] * strides()[d];
    auto* base = static_cast<const uint8_t*>(storage()->data());
    std::string value = INGOT_DISPATCH_ALL_TYPES(dtype(), "to_string", [&]<typename S>() {
      S v = reinterpret_cast<const S*>(base)[off];
      if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
        return fmt::format("{}", float(v));
      } else {
        return fmt::format("{}", v);
      }
    });
    out += (e ? ", " : "") + value;
    for (size_t d = sz.size(); d-- > 0;) {
      if (++idx[d] < sz[d]) break;
      idx[d] = 0;
    }
  }
  return out + "])";
}

}  // namespace ingot
