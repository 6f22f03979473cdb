#include "ingot/ops/index_utils.h"

#include "ingot/core/dtype.h"

namespace ingot {

void check_index_dtype(const Tensor& index, std::string_view op, std::string_view arg,
                       bool allow_mask) {
  const DType t = index.dtype();
  const bool ok =
      t == DType::I64 || t == DType::I32 || (allow_mask && (t == DType::Bool || t == DType::U8));
  INGOT_CHECK(ok, DTypeError, "[{}] argument '{}' must be an int64 or int32{} tensor, got {}", op,
              arg, allow_mask ? " (or bool mask)" : "", t);
}

namespace {

template <typename I>
void read_typed(const Tensor& index, int64_t size, int64_t dim, std::string_view op, bool wrap,
                int64_t* out) {
  const I* base = index.data<I>();
  const int64_t n = index.numel();
  auto take = [&](int64_t k, I raw) {
    int64_t v = int64_t(raw);
    const int64_t lo = wrap ? -size : 0;
    INGOT_CHECK(v >= lo && v < size, ValueError,
                "[{}] index {} is out of bounds for dim {} of size {}", op, v, dim, size);
    out[k] = v < 0 ? v + size : v;
  };
  if (index.is_contiguous()) {
    for (int64_t k = 0; k < n; ++k) take(k, base[k]);
    return;
  }
  // Row-major walk through the strides.
  const IntShape sizes = index.sizes();
  const IntShape& strides = index.strides();
  IntShape pos(sizes.size(), 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    take(k, base[off]);
    for (size_t d = sizes.size(); d-- > 0;) {
      off += strides[d];
      if (++pos[d] < sizes[d]) break;
      off -= pos[d] * strides[d];
      pos[d] = 0;
    }
  }
}

}  // namespace

std::vector<int64_t> read_indices(const Tensor& index, int64_t size, int64_t dim,
                                  std::string_view op, bool wrap) {
  std::vector<int64_t> out(size_t(index.numel()));
  if (out.empty()) return out;
  if (index.dtype() == DType::I64)
    read_typed<int64_t>(index, size, dim, op, wrap, out.data());
  else if (index.dtype() == DType::I32)
    read_typed<int32_t>(index, size, dim, op, wrap, out.data());
  else
    check_index_dtype(index, op, "index");
  return out;
}

}  // namespace ingot
