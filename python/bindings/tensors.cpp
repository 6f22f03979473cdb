// ingot::Tensor as the Python type _Tensor, moved between Python and C++ without copies:
//   in:  _Tensor.from_buffer(obj, dtype=None) wraps any buffer-protocol object (a NumPy
//        array) as a tensor over the same memory, keeping the object alive; strides in
//        bytes must be non-negative multiples of the item size (the Python layer copies
//        other arrays first). bfloat16 arrives as a uint16 buffer with dtype="bfloat16".
//   out: _Tensor exports the buffer protocol, so numpy.asarray(t) is a view of the
//        tensor's memory (read-only for mapped weights) that keeps the tensor alive;
//        bfloat16 is exported as uint16 (the Python layer views it as ml_dtypes.bfloat16
//        when that package is installed).
#include <optional>

#include "bindings.h"

namespace ingot::python {

namespace {

// The buffer-protocol format of each dtype (struct module codes; bf16 as uint16).
const char* buffer_format(DType t) {
  switch (t) {
    case DType::Bool: return "?";
    case DType::U8: return "B";
    case DType::I8: return "b";
    case DType::I16: return "h";
    case DType::I32: return "i";
    case DType::I64: return "q";
    case DType::F16: return "e";
    case DType::BF16: return "H";
    case DType::F32: return "f";
    case DType::F64: return "d";
  }
  return "B";
}

// The dtype of a buffer's format; `dtype` (a PyTorch name) overrides it for uint16
// buffers holding bfloat16.
DType dtype_of_buffer(const py::buffer_info& info, const std::optional<std::string>& dtype) {
  std::string f = info.format;
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<' || f[0] == '|')) f = f.substr(1);
  INGOT_CHECK(f.empty() || (f[0] != '>' && f[0] != '!'), ValueError,
              "[ingot.tensor] big-endian arrays are not supported (format '{}'); convert with "
              "arr.astype(arr.dtype.newbyteorder('<'))",
              info.format);
  if (dtype) {
    const DType want = parse_dtype(*dtype);
    INGOT_CHECK(size_t(info.itemsize) == itemsize(want), DTypeError,
                "[ingot.tensor] dtype {} needs {}-byte items; the array has {}-byte items "
                "(format '{}')",
                *dtype, itemsize(want), info.itemsize, info.format);
    return want;
  }
  const int64_t n = info.itemsize;
  if (f == "?") return DType::Bool;
  if (f == "B") return DType::U8;
  if (f == "b") return DType::I8;
  if (f == "h" && n == 2) return DType::I16;
  if ((f == "i" || f == "l") && n == 4) return DType::I32;
  if ((f == "l" || f == "q") && n == 8) return DType::I64;
  if (f == "e") return DType::F16;
  if (f == "f") return DType::F32;
  if (f == "d") return DType::F64;
  INGOT_THROW(DTypeError,
              "[ingot.tensor] arrays of format '{}' ({}-byte items) are not supported; ingot "
              "takes bool, uint8, int8, int16, int32, int64, float16, bfloat16 (a uint16 view "
              "with dtype='bfloat16', or ml_dtypes.bfloat16), float32, float64",
              info.format, n);
}

// Releases the Python buffer (with the GIL) when the last tensor over it goes.
struct BufferOwner {
  py::buffer_info info;
};

Tensor tensor_from_buffer(const py::buffer& obj, const std::optional<std::string>& dtype) {
  py::buffer_info info = obj.request();
  const DType t = dtype_of_buffer(info, dtype);
  IntShape sizes, strides;
  int64_t extent = 1;  // bytes from the first element to one past the last
  bool empty = false;
  for (ssize_t d = 0; d < info.ndim; ++d) {
    const int64_t size = info.shape[d], stride = info.strides[d];
    INGOT_CHECK(stride >= 0 && stride % info.itemsize == 0, ValueError,
                "[ingot.tensor] dim {} has a byte stride of {} ({}-byte items): ingot takes "
                "non-negative strides that are multiples of the item size (copy with "
                "numpy.ascontiguousarray)",
                d, stride, info.itemsize);
    sizes.push_back(size);
    strides.push_back(stride / info.itemsize);
    if (size == 0) empty = true;
    extent += (size - 1) * stride;
  }
  extent = empty ? 0 : extent - 1 + info.itemsize;
  void* data = info.ptr;
  const bool writable = !info.readonly;
  auto* holder = new BufferOwner{std::move(info)};
  std::shared_ptr<void> owner(holder, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<BufferOwner*>(p);
  });
  auto storage = Storage::from_external(data, size_t(extent), std::move(owner), writable);
  return Tensor::from_storage(std::move(storage), t, sizes, strides, 0);
}

py::buffer_info tensor_buffer(const Tensor& t) {
  INGOT_CHECK(t.defined() && t.has_storage(), ValueError,
              "[ingot.tensor] this tensor has no data (a traced tensor)");
  const ssize_t item = ssize_t(itemsize(t.dtype()));
  std::vector<ssize_t> shape, strides;
  for (int64_t s : t.sizes()) shape.push_back(s);
  for (int64_t s : t.strides()) strides.push_back(s * item);
  return py::buffer_info(t.raw_data(), item, buffer_format(t.dtype()), t.dim(), shape, strides,
                         !t.storage()->writable());
}

}  // namespace

void bind_tensors(py::module_& m) {
  py::class_<Tensor>(m, "_Tensor", py::buffer_protocol())
      .def_buffer([](Tensor& t) { return tensor_buffer(t); })
      .def_static("from_buffer", &tensor_from_buffer, py::arg("obj"), py::arg("dtype") = py::none(),
                  "A tensor over the memory of a buffer-protocol object (no copy)")
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("shape", [](const Tensor& t) { return t.sizes(); })
      .def_property_readonly("strides", [](const Tensor& t) { return t.strides(); })
      .def_property_readonly("data_ptr",
                             [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()); })
      .def_property_readonly("writable", [](const Tensor& t) { return t.storage()->writable(); })
      .def_property_readonly("is_mapped", [](const Tensor& t) { return t.storage()->is_mapped(); })
      .def("__repr__", [](const Tensor& t) { return t.to_string(16); });
}

}  // namespace ingot::python
