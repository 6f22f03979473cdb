// The reader on input the writer would never produce: other encodings protobuf allows
// (unpacked / packed, unknown fields, attributes without a type), and malformed or
// unsupported input, which must be a clear error naming the field path.
#include <gtest/gtest.h>

#include "ingot/exporters/onnx/reader.h"
#include "ingot/exporters/onnx/wire.h"
#include "ingot/exporters/onnx/writer.h"
#include "onnx_test_models.h"

namespace ingot::exporters::onnx {
namespace {

using wire::Encoder;

ModelProto parse(const std::string& bytes) {
  return parse_model(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bad.onnx");
}

// The error message of parsing `bytes`, which must throw E.
template <typename E>
std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception";
  return "";
}

// A ModelProto whose graph has one node with the given (encoded) attribute fields.
std::string model_with_attribute(const std::function<void(Encoder&)>& attribute) {
  std::string out;
  Encoder e(&out);
  e.field_message(7, [&](Encoder& g) {
    g.field_message(1, [&](Encoder& n) {
      n.field_string(3, "node0");
      n.field_string(4, "Foo");
      n.field_message(5, attribute);
    });
  });
  return out;
}

TEST(OnnxReader, AcceptsOtherValidEncodings) {
  std::string bytes;
  Encoder e(&bytes);
  e.field_uint64(99, 5);  // unknown varint field at model level: skipped
  e.field_message(7, [](Encoder& g) {
    g.field_message(5, [](Encoder& t) {
      t.packed_int64s(1, {2, 3});  // dims packed (the writer writes them unpacked)
      t.field_int32(2, int32_t(DataType::Float));
      for (float f : {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}) t.field_float(4, f);  // float_data unpacked
      t.field_string(8, "w");
      t.field_string(77, "future field");
    });
    g.field_message(1, [](Encoder& n) {
      n.field_string(4, "Foo");
      n.field_message(5, [](Encoder& a) {  // an attribute without `type` (pre-IR-2 files)
        a.field_string(1, "axis");
        a.field_int64(3, -1);
      });
      n.field_message(5, [](Encoder& a) {  // ints packed
        a.field_string(1, "perm");
        a.packed_int64s(8, {1, 0});
        a.field_int32(20, int32_t(AttributeType::Ints));
      });
    });
  });
  ModelProto m = parse(bytes);
  const TensorProto& t = m.graph.initializer[0];
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.float_data.size(), 6u);
  Tensor w = to_tensor(t);
  EXPECT_EQ(w.sizes(), (IntShape{2, 3}));
  EXPECT_EQ(w.data<float>()[5], 6.f);
  const NodeProto& n = m.graph.node[0];
  EXPECT_EQ(std::get<int64_t>(n.find_attribute("axis")->value), -1);
  EXPECT_EQ(std::get<std::vector<int64_t>>(n.find_attribute("perm")->value),
            (std::vector<int64_t>{1, 0}));
}

TEST(OnnxReader, TruncatedInputNamesTheFieldPath) {
  std::string bytes = serialize_model(testing::if_model());
  // Every proper prefix is either a valid (smaller) message or an IoError; never a crash.
  int errors = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      parse(bytes.substr(0, n));
    } catch (const IoError& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find("[onnx.load] bad.onnx: "), std::string::npos);
    }
  }
  EXPECT_GT(errors, 0);
  // A truncated file fails at the outermost length; a corrupt field deep inside names
  // its path: make the else branch's Sub output (tag 0x12: field 2, length-delimited)
  // a varint (0x10).
  std::string cut = error_of<IoError>(bytes.substr(0, bytes.size() - 1));
  EXPECT_NE(cut.find("opset_import[0]: length 2 runs past the end"), std::string::npos) << cut;
  size_t at = bytes.find(
      "\x12\x0b"
      "decremented");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = '\x10';
  std::string msg = error_of<IoError>(bytes);
  EXPECT_NE(msg.find("graph.node[0] (If).attribute[1] (else_branch).g.node[0]: field 'output' (2) "
                     "has wire type varint, expected length-delimited"),
            std::string::npos)
      << msg;
}

TEST(OnnxReader, MalformedFieldsAreIoErrors) {
  // Wrong wire type for a known field.
  std::string msg = error_of<IoError>(
      model_with_attribute([](Encoder& a) { a.field_int64(1, 3); }));  // name as a varint
  EXPECT_NE(msg.find("field 'name' (1) has wire type varint, expected length-delimited"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("graph.node[0] (node0).attribute[0]"), std::string::npos) << msg;
  // An attribute whose type disagrees with the value set.
  msg = error_of<IoError>(model_with_attribute([](Encoder& a) {
    a.field_string(1, "k");
    a.field_float(2, 1.f);
    a.field_int32(20, int32_t(AttributeType::Int));
  }));
  EXPECT_NE(msg.find("attribute of type INT also sets the field of type FLOAT"), std::string::npos)
      << msg;
  // A scalar attribute without its value.
  msg = error_of<IoError>(model_with_attribute([](Encoder& a) {
    a.field_string(1, "k");
    a.field_int32(20, int32_t(AttributeType::Tensor));
  }));
  EXPECT_NE(msg.find("attribute of type TENSOR has no value"), std::string::npos) << msg;
  // Out-of-range enum.
  msg = error_of<IoError>(model_with_attribute([](Encoder& a) {
    a.field_string(1, "k");
    a.field_int32(20, 42);
  }));
  EXPECT_NE(msg.find("attribute type 42"), std::string::npos) << msg;
  // Length past the end, group wire type, overlong varint, no graph.
  EXPECT_NE(error_of<IoError>(std::string("\x3a\x05\x0a", 3)).find("runs past the end"),
            std::string::npos);
  EXPECT_NE(error_of<IoError>(std::string("\x3b", 1)).find("start-group"), std::string::npos);
  EXPECT_NE(error_of<IoError>(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12))
                .find("varint"),
            std::string::npos);
  EXPECT_NE(error_of<IoError>(std::string("\x08\x08", 2)).find("has no graph"), std::string::npos);
  EXPECT_NE(error_of<IoError>(std::string("\x00", 1)).find("field number 0"), std::string::npos);
}

TEST(OnnxReader, BadTensorEnumsAreIoErrors) {
  std::string bytes;
  Encoder e(&bytes);
  e.field_message(7,
                  [](Encoder& g) { g.field_message(5, [](Encoder& t) { t.field_int32(2, 99); }); });
  std::string msg = error_of<IoError>(bytes);
  EXPECT_NE(msg.find("graph.initializer[0]: data_type 99"), std::string::npos) << msg;
}

TEST(OnnxReader, UnsupportedFeaturesAreNamed) {
  std::string bytes;
  Encoder e(&bytes);
  e.field_message(7, [](Encoder& g) {
    g.field_message(11, [](Encoder& v) {
      v.field_string(1, "seq");
      v.field_message(2, [](Encoder& type) {
        type.field_message(4, [](Encoder&) {});  // sequence_type
      });
    });
  });
  std::string msg = error_of<NotSupportedError>(bytes);
  EXPECT_NE(msg.find("graph.input[0] (seq).type: a sequence type (field 4) is not supported"),
            std::string::npos)
      << msg;
  std::string functions;
  Encoder f(&functions);
  f.field_message(7, [](Encoder&) {});
  f.field_message(25, [](Encoder&) {});
  EXPECT_NE(error_of<NotSupportedError>(functions).find("model-local functions"),
            std::string::npos);
}

TEST(OnnxReader, DeepNestingIsRejected) {
  // Graph -> node -> attribute g -> graph ... kMaxGraphDepth + 2 levels.
  std::function<void(Encoder&, int)> graph = [&](Encoder& g, int depth) {
    if (depth == 0) return;
    g.field_message(1, [&](Encoder& n) {
      n.field_message(5, [&](Encoder& a) {
        a.field_string(1, "body");
        a.field_message(6, [&](Encoder& sub) { graph(sub, depth - 1); });
        a.field_int32(20, int32_t(AttributeType::Graph));
      });
    });
  };
  std::string ok, deep;
  Encoder eo(&ok), ed(&deep);
  eo.field_message(7, [&](Encoder& g) { graph(g, kMaxGraphDepth); });
  ed.field_message(7, [&](Encoder& g) { graph(g, kMaxGraphDepth + 2); });
  EXPECT_NO_THROW(parse(ok));
  EXPECT_NE(error_of<IoError>(deep).find("nest deeper than"), std::string::npos);
}

TEST(OnnxReader, ExternalDataReferencesAreChecked) {
  ModelProto m = testing::external_model();
  TensorProto& w = m.graph.initializer[0];
  w.raw_data = Bytes();
  w.data_location = DataLocation::External;
  w.external_data = {{"location", "../escape.bin"}};
  EXPECT_THROW(load_external_data(m, "/tmp"), IoError);
  w.external_data = {{"location", "/etc/passwd"}};
  EXPECT_THROW(load_external_data(m, "/tmp"), IoError);
  w.external_data = {{"location", "ingot_does_not_exist.bin"}};
  EXPECT_THROW(load_external_data(m, "/tmp"), IoError);
}

}  // namespace
}  // namespace ingot::exporters::onnx
