// GraphBuilder / ModelBuilder: unique names across subgraphs, visibility checks,
// output renaming, constants and opset imports.
#include <gtest/gtest.h>

#include "ingot/exporters/onnx/builder.h"

namespace ingot::exporters::onnx {
namespace {

TEST(OnnxNameScope, HintWhenFreeElseSuffixes) {
  NameScope s;
  EXPECT_EQ(s.fresh("x"), "x");
  EXPECT_EQ(s.fresh("x"), "x_1");
  EXPECT_TRUE(s.claim("x_2"));
  EXPECT_EQ(s.fresh("x"), "x_3");  // skips the claimed x_2
  EXPECT_FALSE(s.claim("x"));
  EXPECT_EQ(s.fresh(""), "v");
}

TEST(OnnxBuilder, NamesAreUniqueAcrossSubgraphs) {
  ModelBuilder mb;
  GraphBuilder& g = mb.graph();
  auto x = g.add_input("x", DataType::Float, {{2}});
  auto a = g.add_op("Relu", {x}, {}, "h");
  GraphBuilder sub = g.subgraph("then_branch");
  auto b = sub.add_op("Relu", {a}, {}, "h");  // reads the outer value, gets a new name
  EXPECT_EQ(a, "h");
  EXPECT_EQ(b, "h_1");
  EXPECT_EQ(sub.graph().node[0].name, "Relu_1");  // node names are unique too
  EXPECT_EQ(g.graph().node[0].name, "Relu");
  // The subgraph's values are not visible outside it.
  EXPECT_TRUE(sub.is_visible("x"));
  EXPECT_FALSE(g.is_visible(b));
}

TEST(OnnxBuilder, InputsMustBeDefinedFirst) {
  GraphBuilder g("main");
  auto x = g.add_input("x", DataType::Float, {{2}});
  try {
    g.add_op("Add", {x, "missing"});
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'missing'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("input of Add"), std::string::npos) << e.what();
  }
  // "" is an omitted optional input.
  EXPECT_NO_THROW(g.add_op("Clip", {x, "", ""}));
  EXPECT_THROW(g.add_input("x", DataType::Float, {{2}}), ValueError);
  EXPECT_THROW(g.add_op("Relu", {x}, {attr("a", 1), attr("a", 2)}), ValueError);
}

TEST(OnnxBuilder, OutputsKeepExactNamesThroughIdentity) {
  GraphBuilder g("main");
  auto x = g.add_input("input_ids", DataType::Int64, {{"batch", "sequence"}});
  auto y = g.add_op("Neg", {x});
  EXPECT_EQ(y, "neg");
  EXPECT_EQ(g.add_output(y, DataType::Int64, {{"batch", "sequence"}}, "logits"), "logits");
  ASSERT_EQ(g.graph().node.size(), 2u);
  EXPECT_EQ(g.graph().node[1].op_type, "Identity");
  EXPECT_EQ(g.graph().node[1].output[0], "logits");
  // Without a new name the value itself is the output; a name cannot be an output twice.
  auto z = g.add_op("Abs", {x});
  EXPECT_EQ(g.add_output(z, DataType::Int64, std::nullopt), "abs");
  EXPECT_THROW(g.add_output(z, DataType::Int64, std::nullopt), ValueError);
  EXPECT_THROW(g.add_output(z, DataType::Int64, std::nullopt, "logits"), ValueError);
  // A later hint never takes an output's name.
  EXPECT_EQ(g.add_op("Neg", {x}, {}, "logits"), "logits_1");
}

TEST(OnnxBuilder, InitializersAndConstants) {
  GraphBuilder g("main");
  auto w1 = g.add_initializer(make_tensor("layer.weight", std::vector<float>{1, 2}, {2}));
  auto w2 = g.add_initializer(make_tensor("layer.weight", std::vector<float>{3, 4}, {2}));
  EXPECT_EQ(w1, "layer.weight");
  EXPECT_EQ(w2, "layer.weight_1");
  auto c = g.constant_ints({0, -1}, "axes");
  EXPECT_EQ(c, "axes");
  const NodeProto& n = g.graph().node.back();
  EXPECT_EQ(n.op_type, "Constant");
  const auto& t = std::get<TensorProto>(n.find_attribute("value")->value);
  EXPECT_EQ(t.data_type, DataType::Int64);
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2}));
  EXPECT_TRUE(t.name.empty());
  EXPECT_TRUE(g.is_visible(c));
}

TEST(OnnxBuilder, AttributeHelpersPickTheType) {
  EXPECT_EQ(attr("a", 1).type(), AttributeType::Int);
  EXPECT_EQ(attr("a", 1.5).type(), AttributeType::Float);
  EXPECT_EQ(attr("a", "s").type(), AttributeType::String);
  EXPECT_EQ(attr("a", {0, 1}).type(), AttributeType::Ints);
  EXPECT_EQ(attr("a", std::vector<float>{1.f}).type(), AttributeType::Floats);
  EXPECT_EQ(attr("a", std::vector<std::string>{"x"}).type(), AttributeType::Strings);
  EXPECT_EQ(attr("a", GraphProto{}).type(), AttributeType::Graph);
}

TEST(OnnxBuilder, ModelOpsetsAndVersions) {
  EXPECT_THROW(ModelBuilder("m", 16), ValueError);
  EXPECT_EQ(ir_version_for_opset(17), 8);
  EXPECT_EQ(ir_version_for_opset(21), 10);
  EXPECT_EQ(ir_version_for_opset(23), 11);
  ModelBuilder mb("m", 21);
  mb.import_opset("com.microsoft", 1);
  mb.import_opset("com.microsoft", 1);  // idempotent
  EXPECT_THROW(mb.import_opset("com.microsoft", 2), ValueError);
  mb.graph().add_input("x", DataType::Float, {{1}});
  ModelProto m = mb.build();
  EXPECT_EQ(m.ir_version, 10);
  EXPECT_EQ(m.opset_version(""), 21);
  EXPECT_EQ(m.opset_version("ai.onnx"), 21);
  EXPECT_EQ(m.opset_version("com.microsoft"), 1);
  EXPECT_EQ(m.opset_import.size(), 2u);
  EXPECT_EQ(m.graph.name, "m");
}

}  // namespace
}  // namespace ingot::exporters::onnx
