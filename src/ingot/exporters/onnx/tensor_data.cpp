#include "ingot/exporters/onnx/tensor_data.h"

#include <cstring>

#include "ingot/core/storage.h"
#include "ingot/ops/functional/views.h"

namespace ingot::exporters::onnx {

namespace {

// Packs each int32 value's low `size` bytes (how ONNX stores 8/16-bit types in int32_data).
Bytes narrow_int32s(const std::vector<int32_t>& v, size_t size) {
  std::string out(v.size() * size, '\0');
  for (size_t i = 0; i < v.size(); ++i) std::memcpy(out.data() + i * size, &v[i], size);
  return Bytes(std::move(out));
}

template <typename T>
Bytes bytes_of(const std::vector<T>& v) {
  return Bytes::copy_of(v.data(), v.size() * sizeof(T));
}

}  // namespace

int64_t tensor_numel(const TensorProto& t, const std::string& where) {
  int64_t n = 1;
  for (int64_t d : t.dims) {
    INGOT_CHECK(d >= 0, IoError, "[onnx] {} '{}': negative dim {} in dims {}", where, t.name, d,
                t.dims);
    INGOT_CHECK(d == 0 || n <= (int64_t(1) << 56) / d, IoError,
                "[onnx] {} '{}': dims {} have too many elements", where, t.name, t.dims);
    n *= d;
  }
  return n;
}

size_t tensor_nbytes(const TensorProto& t, const std::string& where) {
  size_t size = data_type_size(t.data_type);
  INGOT_CHECK(size != 0, NotSupportedError,
              "[onnx] {} '{}': element type {} has no fixed byte size (ingot handles numeric and "
              "bool tensors)",
              where, t.name, data_type_name(t.data_type));
  return size_t(tensor_numel(t, where)) * size;
}

TensorProto make_tensor(std::string name, const Tensor& t) {
  INGOT_CHECK(t.has_storage(), ValueError,
              "[onnx.make_tensor] tensor '{}' has no data (a traced tensor): only real tensors "
              "become initializers or constants",
              name);
  Tensor c = contiguous(t);
  TensorProto out;
  out.name = std::move(name);
  out.data_type = to_data_type(c.dtype());
  out.dims = c.sizes();
  if (c.nbytes() > 0) out.raw_data = Bytes::view(c.raw_data(), c.nbytes(), c.storage());
  return out;
}

Bytes tensor_bytes(const TensorProto& t, const std::string& where) {
  INGOT_CHECK(t.data_location != DataLocation::External, IoError,
              "[onnx] {} '{}' refers to external data in '{}' that is not loaded (call "
              "load_external_data)",
              where, t.name, t.external("location"));
  size_t nbytes = tensor_nbytes(t, where);
  size_t numel = size_t(tensor_numel(t, where));
  int fields = int(!t.raw_data.empty()) + int(!t.float_data.empty()) + int(!t.int32_data.empty()) +
               int(!t.int64_data.empty()) + int(!t.double_data.empty()) +
               int(!t.uint64_data.empty()) + int(!t.string_data.empty());
  INGOT_CHECK(fields <= 1, IoError, "[onnx] {} '{}' stores its data in {} fields, expected one",
              where, t.name, fields);
  if (fields == 0) {
    INGOT_CHECK(numel == 0, IoError, "[onnx] {} '{}' of dims {} has no data", where, t.name,
                t.dims);
    return Bytes();
  }
  if (!t.raw_data.empty()) {
    INGOT_CHECK(t.raw_data.size() == nbytes, IoError,
                "[onnx] {} '{}': raw_data has {} bytes, expected {} ({} {} elements)", where,
                t.name, t.raw_data.size(), nbytes, numel, data_type_name(t.data_type));
    return t.raw_data;
  }
  size_t size = data_type_size(t.data_type);
  // Which typed field holds this element type, and how many values it must have.
  auto check_count = [&](size_t have, size_t want, const char* field) {
    INGOT_CHECK(have == want, IoError, "[onnx] {} '{}': {} has {} values, expected {} for dims {}",
                where, t.name, field, have, want, t.dims);
  };
  auto wrong_field = [&](const char* field) {
    INGOT_THROW(IoError,
                "[onnx] {} '{}': element type {} keeps its values in raw_data or {}, but another "
                "field is set",
                where, t.name, data_type_name(t.data_type), field);
  };
  switch (t.data_type) {
    case DataType::Float:
    case DataType::Complex64: {
      if (t.float_data.empty()) wrong_field("float_data");
      check_count(t.float_data.size(), nbytes / 4, "float_data");
      return bytes_of(t.float_data);
    }
    case DataType::Double:
    case DataType::Complex128: {
      if (t.double_data.empty()) wrong_field("double_data");
      check_count(t.double_data.size(), nbytes / 8, "double_data");
      return bytes_of(t.double_data);
    }
    case DataType::Int64: {
      if (t.int64_data.empty()) wrong_field("int64_data");
      check_count(t.int64_data.size(), numel, "int64_data");
      return bytes_of(t.int64_data);
    }
    case DataType::Uint32:
    case DataType::Uint64: {
      if (t.uint64_data.empty()) wrong_field("uint64_data");
      check_count(t.uint64_data.size(), numel, "uint64_data");
      if (size == 8) return bytes_of(t.uint64_data);
      std::string out(numel * 4, '\0');
      for (size_t i = 0; i < numel; ++i) {
        auto v = uint32_t(t.uint64_data[i]);
        std::memcpy(out.data() + i * 4, &v, 4);
      }
      return Bytes(std::move(out));
    }
    default: {
      // Int32, Int16, Int8, Uint16, Uint8, Bool, Float16, BFloat16, 8-bit floats.
      if (t.int32_data.empty()) wrong_field("int32_data");
      check_count(t.int32_data.size(), numel, "int32_data");
      return narrow_int32s(t.int32_data, size);
    }
  }
}

Tensor to_tensor(const TensorProto& t) {
  DType dtype = to_dtype(t.data_type);
  Bytes bytes = tensor_bytes(t);
  IntShape sizes(t.dims.begin(), t.dims.end());
  bool aligned = reinterpret_cast<uintptr_t>(bytes.data()) % itemsize(dtype) == 0;
  if (bytes.owner() && aligned && !bytes.empty()) {
    auto storage = Storage::from_external(const_cast<uint8_t*>(bytes.data()), bytes.size(),
                                          std::const_pointer_cast<void>(bytes.owner()),
                                          /*writable=*/false);
    return Tensor::from_storage(storage, dtype, sizes, contiguous_strides(sizes), 0);
  }
  Tensor out = Tensor::empty(sizes, dtype);
  if (!bytes.empty()) std::memcpy(out.raw_data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace ingot::exporters::onnx
