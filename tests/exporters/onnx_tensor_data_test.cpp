// TensorProto payloads: raw_data and typed fields to bytes and ingot tensors, and the
// checks that keep a tensor from an untrusted file safe to use.
#include <gtest/gtest.h>

#include "ingot/exporters/onnx/tensor_data.h"

namespace ingot::exporters::onnx {
namespace {

TensorProto typed(DataType type, std::vector<int64_t> dims) {
  TensorProto t;  // unnamed: GCC 12 warns (-Wrestrict) on assigning a literal name here
  t.data_type = type;
  t.dims = std::move(dims);
  return t;
}

TEST(OnnxTensorData, DTypeMapping) {
  for (DType d : {DType::Bool, DType::U8, DType::I8, DType::I16, DType::I32, DType::I64, DType::F16,
                  DType::BF16, DType::F32, DType::F64}) {
    EXPECT_EQ(to_dtype(to_data_type(d)), d);
    EXPECT_EQ(data_type_size(to_data_type(d)), itemsize(d));
  }
  EXPECT_EQ(to_data_type(DType::BF16), DataType::BFloat16);
  EXPECT_EQ(int(to_data_type(DType::BF16)), 16);
  EXPECT_EQ(int(to_data_type(DType::F16)), 10);
  EXPECT_THROW(to_dtype(DataType::String), NotSupportedError);
  EXPECT_EQ(data_type_name(DataType::BFloat16), "BFLOAT16");
  EXPECT_EQ(data_type_name(DataType(99)), "UNKNOWN(99)");
}

TEST(OnnxTensorData, TypedFieldsBecomeRawBytes) {
  TensorProto h = typed(DataType::Float16, {2});
  h.int32_data = {Half(1.5f).bits, Half(-2.f).bits};  // 16-bit types live in int32_data
  Tensor th = to_tensor(h);
  EXPECT_EQ(th.dtype(), DType::F16);
  EXPECT_EQ(float(th.data<Half>()[0]), 1.5f);
  EXPECT_EQ(float(th.data<Half>()[1]), -2.f);

  TensorProto i8 = typed(DataType::Int8, {3});
  i8.int32_data = {-1, 127, -128};
  Tensor ti = to_tensor(i8);
  EXPECT_EQ(ti.data<int8_t>()[0], -1);
  EXPECT_EQ(ti.data<int8_t>()[2], -128);

  TensorProto i64 = typed(DataType::Int64, {});  // a scalar
  i64.int64_data = {-5};
  EXPECT_EQ(to_tensor(i64).item<int64_t>(), -5);

  TensorProto d = typed(DataType::Double, {1});
  d.double_data = {0.25};
  EXPECT_EQ(to_tensor(d).data<double>()[0], 0.25);

  TensorProto u32 = typed(DataType::Uint32, {2});
  u32.uint64_data = {7, 0xffffffffu};
  Bytes b = tensor_bytes(u32);
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(b.data()[4], 0xff);
}

TEST(OnnxTensorData, CountsMustMatchDims) {
  TensorProto f = typed(DataType::Float, {2, 2});
  f.float_data = {1, 2, 3};
  EXPECT_THROW(tensor_bytes(f), IoError);
  TensorProto r = typed(DataType::Float, {2});
  r.raw_data = Bytes(std::string(7, '\0'));
  EXPECT_THROW(tensor_bytes(r), IoError);
  TensorProto both = typed(DataType::Float, {1});
  both.raw_data = Bytes(std::string(4, '\0'));
  both.float_data = {1};
  EXPECT_THROW(tensor_bytes(both), IoError);
  TensorProto wrong = typed(DataType::Float, {1});
  wrong.int64_data = {1};
  EXPECT_THROW(tensor_bytes(wrong), IoError);
  TensorProto empty = typed(DataType::Float, {3, 0});
  EXPECT_EQ(tensor_bytes(empty).size(), 0u);
  TensorProto missing = typed(DataType::Float, {3});
  EXPECT_THROW(tensor_bytes(missing), IoError);
  TensorProto negative = typed(DataType::Float, {-1});
  EXPECT_THROW(tensor_numel(negative), IoError);
  TensorProto huge = typed(DataType::Float, {int64_t(1) << 40, int64_t(1) << 40});
  EXPECT_THROW(tensor_numel(huge), IoError);
  TensorProto external = typed(DataType::Float, {1});
  external.data_location = DataLocation::External;
  EXPECT_THROW(tensor_bytes(external), IoError);
}

TEST(OnnxTensorData, MakeTensorOfNonContiguousCopies) {
  // [2, 3] transposed to [3, 2]: elements come out in the view's order.
  Tensor t = Tensor::from_vector(std::vector<int32_t>{0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor tt = t.as_strided({3, 2}, {1, 3}, 0);
  TensorProto p = make_tensor("tt", tt);
  EXPECT_EQ(p.dims, (std::vector<int64_t>{3, 2}));
  Tensor back = to_tensor(p);
  std::vector<int32_t> got(back.data<int32_t>(), back.data<int32_t>() + 6);
  EXPECT_EQ(got, (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_THROW(make_tensor("m", Tensor::meta(DType::F32, {SymInt(2)})), ValueError);
}

TEST(OnnxTensorData, MisalignedRawDataIsCopied) {
  static const uint8_t bytes[9] = {0, 0, 0, 128, 63, 0, 0, 0, 64};  // floats at offset 1
  TensorProto p = typed(DataType::Float, {2});
  p.raw_data = Bytes::view(bytes + 1, 8, std::shared_ptr<const void>(bytes, [](const void*) {}));
  Tensor t = to_tensor(p);
  EXPECT_NE(static_cast<const void*>(t.raw_data()), static_cast<const void*>(bytes + 1));
  EXPECT_EQ(t.data<float>()[0], 1.f);
  EXPECT_EQ(t.data<float>()[1], 2.f);
}

}  // namespace
}  // namespace ingot::exporters::onnx
