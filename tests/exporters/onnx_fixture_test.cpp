// The reader on a file written by another producer: tests/fixtures/onnx/helper_typed.onnx,
// made by onnx.helper (tools/onnx/make_reader_fixtures.py), which keeps tensor values in
// the typed fields and sets fields ingot's writer leaves out.
#include <gtest/gtest.h>

#include "../models/fixture_path.h"
#include "ingot/exporters/onnx/reader.h"
#include "ingot/exporters/onnx/tensor_data.h"
#include "ingot/exporters/onnx/writer.h"

namespace ingot::exporters::onnx {
namespace {

const NodeProto& node(const GraphProto& g, const std::string& op) {
  for (const auto& n : g.node)
    if (n.op_type == op) return n;
  throw std::runtime_error("no " + op + " node");
}

TEST(OnnxFixture, ReadsAModelMadeByOnnxHelper) {
  ModelProto m = load_model(ingot::testing::fixture_path("onnx/helper_typed.onnx"));
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.opset_version(), 18);
  EXPECT_EQ(m.producer_name, "onnx.helper");
  ASSERT_EQ(m.metadata_props.size(), 1u);
  EXPECT_EQ(m.metadata_props[0].key, "purpose");
  EXPECT_EQ(m.metadata_props[0].value, "reader fixture");
  EXPECT_EQ(m.graph.doc_string, "made by onnx.helper");

  // Initializers in float_data, int32_data (float16 bit patterns) and int64_data.
  ASSERT_EQ(m.graph.initializer.size(), 3u);
  Tensor w = to_tensor(m.graph.initializer[0]);
  EXPECT_EQ(w.sizes(), (IntShape{2, 3}));
  std::vector<float> wv(w.data<float>(), w.data<float>() + 6);
  EXPECT_EQ(wv, (std::vector<float>{1.f, -2.f, 3.5f, 0.f, 0.25f, -8.f}));
  Tensor h = to_tensor(m.graph.initializer[1]);
  ASSERT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(float(h.data<Half>()[0]), 1.5f);
  EXPECT_EQ(float(h.data<Half>()[1]), -0.5f);
  Tensor shape = to_tensor(m.graph.initializer[2]);
  EXPECT_EQ(shape.data<int64_t>()[0], 3);
  EXPECT_EQ(shape.data<int64_t>()[1], 2);

  // Attributes of every kind the file uses.
  const NodeProto& if_node = node(m.graph, "If");
  EXPECT_EQ(if_node.doc_string, "choose a branch");
  const auto& then_g = *std::get<Box<GraphProto>>(if_node.find_attribute("then_branch")->value);
  EXPECT_EQ(then_g.name, "then_branch");
  EXPECT_EQ(then_g.output[0].type->shape->at(0).dim_param(), "batch");
  EXPECT_EQ(
      std::get<std::vector<int64_t>>(node(m.graph, "Transpose").find_attribute("perm")->value),
      (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(std::get<float>(node(m.graph, "LeakyRelu").find_attribute("alpha")->value), 0.125f);
  EXPECT_EQ(std::get<int64_t>(node(m.graph, "Cast").find_attribute("to")->value),
            int64_t(DataType::Float));
  EXPECT_EQ(node(m.graph, "MatMul").name, "matmul");

  // Shapes: a scalar input, an unknown dim, value_info.
  EXPECT_TRUE(m.graph.input[0].type->shape->empty());
  const auto& y_dims = *m.graph.output[0].type->shape;
  EXPECT_FALSE(y_dims[0].is_value() || y_dims[0].is_param());
  EXPECT_EQ(y_dims[1].dim_value(), 2);
  ASSERT_EQ(m.graph.value_info.size(), 1u);
  EXPECT_EQ(m.graph.value_info[0].name, "mm");

  // What ingot writes of it reads back equal.
  std::string bytes = serialize_model(m);
  ModelProto again =
      parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "rewritten");
  EXPECT_TRUE(again == m);
}

}  // namespace
}  // namespace ingot::exporters::onnx
