// Writer and reader round trips on hand-built models: bytes -> struct -> bytes is exact,
// external data is written, aligned and read back, weights are not copied.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "ingot/exporters/onnx/reader.h"
#include "ingot/exporters/onnx/writer.h"
#include "onnx_test_models.h"

namespace ingot::exporters::onnx {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

ModelProto parse(const std::string& bytes) {
  return parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test");
}

void expect_exact_round_trip(const ModelProto& m) {
  std::string bytes = serialize_model(m);
  ModelProto back = parse(bytes);
  EXPECT_TRUE(back == m);
  EXPECT_EQ(serialize_model(back), bytes);
}

class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("ingot_onnx_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(OnnxRoundTrip, AddMatMulWithDimParam) {
  ModelProto m = testing::add_matmul_model();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  EXPECT_EQ(back.ir_version, 8);
  EXPECT_EQ(back.opset_version(), 18);
  EXPECT_EQ(back.producer_name, "ingot");
  ASSERT_EQ(back.graph.input.size(), 2u);
  const auto& shape = *back.graph.input[0].type->shape;
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(shape[0].dim_param(), "batch");
  EXPECT_EQ(shape[1].dim_value(), 3);
  ASSERT_EQ(back.graph.node.size(), 2u);
  EXPECT_EQ(back.graph.node[1].op_type, "MatMul");
  EXPECT_EQ(back.graph.node[1].input, (std::vector<std::string>{"sum", "w"}));
  Tensor w = to_tensor(back.graph.initializer[0]);
  EXPECT_EQ(w.sizes(), (IntShape{3, 4}));
  std::vector<float> expect = testing::add_matmul_weight();
  EXPECT_EQ(std::memcmp(w.data<float>(), expect.data(), 48), 0);
}

TEST(OnnxRoundTrip, IfWithTwoSubgraphs) {
  ModelProto m = testing::if_model();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  const NodeProto& n = back.graph.node.back();
  ASSERT_EQ(n.op_type, "If");
  const auto* then_b = n.find_attribute("then_branch");
  const auto* else_b = n.find_attribute("else_branch");
  ASSERT_TRUE(then_b && else_b);
  EXPECT_EQ(then_b->type(), AttributeType::Graph);
  const GraphProto& tg = *std::get<Box<GraphProto>>(then_b->value);
  const GraphProto& eg = *std::get<Box<GraphProto>>(else_b->value);
  EXPECT_EQ(tg.node[0].op_type, "Constant");
  EXPECT_EQ(tg.node[1].input, (std::vector<std::string>{"x", "two"}));
  EXPECT_EQ(eg.initializer.size(), 1u);
  EXPECT_EQ(eg.output[0].name, "decremented");
}

TEST(OnnxRoundTrip, LoopBodyAndOmittedInput) {
  ModelProto m = testing::loop_model();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  EXPECT_EQ(back.graph.node[0].input, (std::vector<std::string>{"trips", "", "acc0"}));
}

TEST(OnnxRoundTrip, HalfAndBFloat16Initializers) {
  ModelProto m = testing::half_model();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  ASSERT_EQ(back.graph.initializer.size(), 2u);
  EXPECT_EQ(back.graph.initializer[0].data_type, DataType::Float16);
  EXPECT_EQ(back.graph.initializer[1].data_type, DataType::BFloat16);
  Tensor h = to_tensor(back.graph.initializer[0]);
  Tensor b = to_tensor(back.graph.initializer[1]);
  ASSERT_EQ(h.dtype(), DType::F16);
  ASSERT_EQ(b.dtype(), DType::BF16);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(h.data<Half>()[i].bits, testing::half_values()[size_t(i)].bits);
    EXPECT_EQ(b.data<BFloat16>()[i].bits, testing::bfloat_values()[size_t(i)].bits);
  }
}

TEST(OnnxRoundTrip, EveryAttributeKindAndMetadata) {
  ModelBuilder mb("attrs");
  mb.import_opset("com.microsoft", 1);
  mb.add_metadata("ingot.dims", "batch:1..64");
  mb.set_doc_string("attribute kinds");
  GraphBuilder& g = mb.graph();
  auto x = g.add_input("x", DataType::Float, std::nullopt);  // unknown rank
  GraphBuilder sub = g.subgraph("sub");
  sub.add_output(sub.add_op("Identity", {x}), DataType::Float, std::nullopt);
  GraphProto sub_graph = sub.build();
  std::vector<AttributeProto> attrs = {
      attr("f", 0.f),  // zero values are still written (the value field is always present)
      attr("i", int64_t(-7)),
      attr("s", ""),
      attr("t", make_tensor("", std::vector<int64_t>{1, -2}, {2})),
      attr("g", sub_graph),
      attr("floats", std::vector<float>{1.5f, -0.f}),
      attr("ints", std::vector<int64_t>{}),
      attr("strings", std::vector<std::string>{"a", ""})};
  AttributeProto tensors;
  tensors.name = "tensors";
  tensors.doc_string = "two tensors";
  tensors.value = std::vector<TensorProto>{make_tensor("", std::vector<int8_t>{-1}, {1}),
                                           make_tensor("", std::vector<bool>{true, false}, {2})};
  attrs.push_back(tensors);
  attrs.push_back(attr("graphs", std::vector<GraphProto>{sub_graph, sub_graph}));
  NodeOptions options;
  options.domain = "com.microsoft";
  options.doc_string = "a.cpp:3";
  auto y = g.add_op("Custom", {x}, attrs, "y", options);
  g.add_output(y, DataType::Float, std::nullopt);
  ModelProto m = mb.build();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  EXPECT_EQ(back.opset_version("com.microsoft"), 1);
  EXPECT_EQ(back.metadata_props[0].value, "batch:1..64");
  const NodeProto& n = back.graph.node.back();
  EXPECT_EQ(n.domain, "com.microsoft");
  EXPECT_EQ(n.doc_string, "a.cpp:3");
  ASSERT_EQ(n.attribute.size(), 10u);
  for (size_t i = 0; i < n.attribute.size(); ++i) {
    EXPECT_EQ(int(n.attribute[i].type()), int(i) + 1) << n.attribute[i].name;
  }
  EXPECT_EQ(std::get<int64_t>(n.find_attribute("i")->value), -7);
  EXPECT_FALSE(back.graph.input[0].type->shape.has_value());
}

TEST(OnnxRoundTrip, ScalarShapeDiffersFromUnknownRank) {
  ModelBuilder mb("scalar");
  GraphBuilder& g = mb.graph();
  auto s = g.add_input("s", DataType::Float, {std::vector<Dim>{}});
  auto u = g.add_input("u", DataType::Float, std::nullopt);
  auto d = g.add_input("d", DataType::Float, {{Dim(), 0}});  // an unknown dim and a 0 dim
  g.add_output(g.add_op("Add", {s, u}), DataType::Float, std::nullopt);
  g.add_output(d, DataType::Float, std::nullopt);
  ModelProto m = mb.build();
  expect_exact_round_trip(m);
  ModelProto back = parse(serialize_model(m));
  EXPECT_TRUE(back.graph.input[0].type->shape.has_value());
  EXPECT_TRUE(back.graph.input[0].type->shape->empty());
  EXPECT_FALSE(back.graph.input[1].type->shape.has_value());
  const auto& dims = *back.graph.input[2].type->shape;
  EXPECT_FALSE(dims[0].is_value() || dims[0].is_param());
  EXPECT_EQ(dims[1].dim_value(), 0);
}

TEST(OnnxRoundTrip, ExternalDataIsWrittenAlignedAndReadBack) {
  TempDir dir;
  ModelProto m = testing::external_model();
  SaveOptions options;
  options.external_data_file = "model.onnx.data";
  save_model(m, (dir.path() / "model.onnx").string(), options);

  // Without loading external data: w refers to the data file, b stays inside.
  ModelProto refs = load_model((dir.path() / "model.onnx").string(), /*load_external=*/false);
  const TensorProto& w = refs.graph.initializer[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.data_location, DataLocation::External);
  EXPECT_TRUE(w.raw_data.empty());
  EXPECT_EQ(w.external("location"), "model.onnx.data");
  EXPECT_EQ(w.external("offset"), "0");
  EXPECT_EQ(w.external("length"), "16384");
  EXPECT_EQ(refs.graph.initializer[1].data_location, DataLocation::Default);
  EXPECT_EQ(fs::file_size(dir.path() / "model.onnx.data"), 16384u);
  // The references themselves round-trip exactly, and the file is what the writer made.
  EXPECT_EQ(serialize_model(refs), read_file(dir.path() / "model.onnx"));
  std::vector<ExternalPiece> pieces;
  EXPECT_TRUE(externalize_initializers(m, options, pieces) == refs);

  // Loading external data gives back the original model.
  ModelProto loaded = load_model((dir.path() / "model.onnx").string());
  EXPECT_TRUE(loaded == m);
  // Saving a model whose tensor refers to unloaded external data is refused.
  EXPECT_THROW(save_model(refs, (dir.path() / "again.onnx").string()), ValueError);
}

TEST(OnnxRoundTrip, ExternalOffsetsFollowAlignment) {
  ModelBuilder mb("aligned");
  GraphBuilder& g = mb.graph();
  auto a = g.add_initializer(make_tensor("a", std::vector<float>(300, 1.f), {300}));  // 1200 B
  auto b = g.add_initializer(make_tensor("b", std::vector<float>(300, 2.f), {300}));
  g.add_output(g.add_op("Add", {a, b}), DataType::Float, {{300}});
  SaveOptions options;
  options.external_data_file = "w.bin";
  std::vector<ExternalPiece> pieces;
  ModelProto ext = externalize_initializers(mb.build(), options, pieces);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].offset, 0u);
  EXPECT_EQ(pieces[1].offset, 1216u);  // 1200 rounded up to a multiple of 64
  EXPECT_EQ(ext.graph.initializer[1].external("offset"), "1216");
}

TEST(OnnxRoundTrip, LoadModelViewsTheMappedFileWithoutCopying) {
  TempDir dir;
  save_model(testing::add_matmul_model(), (dir.path() / "m.onnx").string());
  ModelProto m = load_model((dir.path() / "m.onnx").string());
  const Bytes& raw = m.graph.initializer[0].raw_data;
  ASSERT_EQ(raw.size(), 48u);
  EXPECT_NE(raw.owner(), nullptr);  // a view kept alive by the mapping
  // make_tensor of a contiguous tensor shares its storage.
  Tensor t = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  TensorProto p = make_tensor("t", t);
  EXPECT_EQ(p.raw_data.data(), static_cast<const uint8_t*>(t.raw_data()));
}

TEST(OnnxRoundTrip, OversizedModelsMustUseExternalData) {
  // A 2 GiB + 1 tensor view (never touched: the size check runs before any byte is written).
  static const char byte = 0;
  TensorProto big;
  big.name = "big";
  big.data_type = DataType::Uint8;
  big.dims = {int64_t(kMaxProtoBytes) + 1};
  big.raw_data = Bytes::view(&byte, kMaxProtoBytes + 1, nullptr);
  ModelProto m;
  m.graph.initializer.push_back(big);
  EXPECT_THROW(serialize_model(m), ValueError);
}

}  // namespace
}  // namespace ingot::exporters::onnx
