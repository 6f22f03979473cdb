// Tensor: a strided view of a Storage, with a dtype and sizes.
//
// A Tensor is a cheap handle (shared_ptr to TensorImpl); copying it aliases. Views
// (reshape, transpose, slice, ...) share the storage and differ in sizes, strides and
// offset. Sizes are SymInt: plain for eager tensors, symbolic for the traced tensors of
// export, which have no storage. Strides and offset are in elements and only meaningful
// for tensors with storage.
//
// Operations live in ops/ (ingot/ops/functional.h); this class only holds metadata and
// gives typed access to data for kernels.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "ingot/core/dtype.h"
#include "ingot/core/storage.h"
#include "ingot/core/sym_int.h"

namespace ingot {

using Shape = std::vector<SymInt>;
using IntShape = std::vector<int64_t>;

// Extra state a higher layer attaches to a tensor (the tracer's producing node). core/
// only keeps it alive.
class TensorAnnotation {
 public:
  virtual ~TensorAnnotation() = default;
};

struct TensorImpl {
  DType dtype = DType::F32;
  Shape sizes;
  IntShape strides;            // in elements; empty for storage-less tensors
  int64_t storage_offset = 0;  // in elements
  std::shared_ptr<Storage> storage;
  std::shared_ptr<TensorAnnotation> annotation;
};

class Tensor {
 public:
  Tensor() = default;  // undefined tensor (an absent optional argument)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- construction --------------------------------------------------------------
  // Uninitialised contiguous tensor (zeroed when zero_fill).
  static Tensor empty(const IntShape& sizes, DType dtype, bool zero_fill = false);
  // Contiguous tensor copied from values (sizes must match values.size()).
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, const IntShape& sizes);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({value}, {});
  }
  // A view of existing storage with explicit geometry; checks it stays in bounds.
  static Tensor from_storage(std::shared_ptr<Storage> storage, DType dtype,
                            const IntShape& sizes, const IntShape& strides,
                            int64_t storage_offset);
  // A tensor without data (export's traced tensors): dtype and symbolic sizes only.
  static Tensor meta(DType dtype, Shape sizes,
                     std::shared_ptr<TensorAnnotation> annotation = nullptr);

  // A view sharing this tensor's storage (used by view kernels).
  Tensor as_strided(const IntShape& sizes, const IntShape& strides,
                    int64_t storage_offset) const;

  // --- metadata --------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  bool has_storage() const { return impl_ && impl_->storage != nullptr; }
  DType dtype() const { return impl().dtype; }
  int64_t dim() const { return int64_t(impl().sizes.size()); }
  const Shape& sym_sizes() const { return impl().sizes; }
  // `where` is remembered as the last user line (see note_user_location) so that a
  // branch on the size is attributed to the caller's statement.
  const SymInt& sym_size(int64_t d,
                         std::source_location where = std::source_location::current()) const;
  // Plain sizes; throws if any size is symbolic.
  IntShape sizes() const;
  int64_t size(int64_t d) const { return sym_size(d).expect_int(); }
  const IntShape& strides() const { return impl().strides; }
  int64_t stride(int64_t d) const;
  int64_t storage_offset() const { return impl().storage_offset; }
  int64_t numel() const;
  SymInt sym_numel() const;
  size_t nbytes() const { return size_t(numel()) * itemsize(dtype()); }
  bool is_contiguous() const;
  // Wraps a possibly negative dim into [0, dim()); throws ValueError naming `op`.
  int64_t wrap_dim(int64_t d, const char* op = "dim") const;

  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  const std::shared_ptr<TensorAnnotation>& annotation() const { return impl().annotation; }
  TensorImpl& unsafe_impl() const { return impl(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // True when both views share one storage (writes through one may show in the other).
  bool shares_storage_with(const Tensor& o) const;

  // --- data access (tensors with storage only) ---------------------------------------
  // Address of element [0, ..., 0]. T must match dtype().
  template <typename T>
  T* data() const {
    check_dtype(dtype_of<T>, "data");
    return static_cast<T*>(raw_data());
  }
  void* raw_data() const;
  // Throws if the storage is read-only (a mapped weight file).
  void check_writable(const char* op) const;
  // The single element of a one-element tensor, converted to T.
  template <typename T>
  T item() const;

  std::string shape_string() const;
  // "Tensor(float32, [2, 3])" plus values when small.
  std::string to_string(int64_t max_elements = 64) const;

 private:
  TensorImpl& impl() const;
  void check_dtype(DType expected, const char* what) const;
  std::shared_ptr<TensorImpl> impl_;
};

IntShape contiguous_strides(const IntShape& sizes);
std::string shape_str(const Shape& sizes);
std::string shape_str(const IntShape& sizes);
// Plain sizes of a Shape; throws if any is symbolic.
IntShape to_int_shape(const Shape& sizes);
Shape to_sym_shape(const IntShape& sizes);
int64_t shape_numel(const IntShape& sizes);

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, const IntShape& sizes) {
  INGOT_CHECK(int64_t(values.size()) == shape_numel(sizes), ShapeError,
              "[Tensor::from_vector] {} values do not fill shape {}", values.size(),
              ::ingot::shape_str(sizes));
  Tensor t = empty(sizes, dtype_of<T>);
  T* out = static_cast<T*>(t.raw_data());
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace ingot
