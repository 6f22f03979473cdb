// Export configs: AutoExportConfig::from_json picks the class, configs serialise back to
// equal JSON, bad JSON is an error naming the key or format; AutoExporter picks the
// exporter; per-component configs name a missing component.
#include <gtest/gtest.h>

#include "ingot/exporters/config.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/onnx/onnx_exporter.h"

namespace ingot::exporters {
namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ExportConfig, FromJsonPicksTheClassAndReadsEveryField) {
  auto c = AutoExportConfig::from_json(R"({"export_format": "onnx", "dynamic": true, "opset": 19,
      "optimize": true, "external_data": "always", "external_threshold": 4096, "output_path": "m.onnx",
      "max_seq": 512, "prefer_deferred_runtime_asserts_over_guards": true})");
  ASSERT_EQ(c->export_format(), "onnx");
  auto* o = dynamic_cast<OnnxConfig*>(c.get());
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->dynamic);
  EXPECT_EQ(o->opset, 19);
  EXPECT_TRUE(o->optimize);
  EXPECT_EQ(o->external_data, "always");
  EXPECT_EQ(o->external_threshold, 4096);
  EXPECT_EQ(o->output_path, "m.onnx");
  EXPECT_EQ(o->max_seq, 512);
  EXPECT_TRUE(o->prefer_deferred_runtime_asserts_over_guards);

  auto n = AutoExportConfig::from_json(R"({"export_format": "native"})");
  EXPECT_EQ(n->export_format(), "native");
  EXPECT_EQ(dynamic_cast<OnnxConfig*>(n.get()), nullptr);
  EXPECT_FALSE(n->dynamic);
}

TEST(ExportConfig, SerialisesBackToAnEqualConfig) {
  OnnxConfig o;
  o.dynamic_shapes_json =
      R"({"input_ids": {"0": "batch", "1": {"name": "seq", "min": 1, "max": 64}}})";
  o.opset = 20;
  o.optimize = true;
  o.output_path = "out/model.onnx";
  const std::string json = o.to_json();
  auto back = AutoExportConfig::from_json(json);
  EXPECT_EQ(back->to_json(), json);
  auto* b = dynamic_cast<OnnxConfig*>(back.get());
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->opset, 20);
  EXPECT_EQ(b->dynamic_shapes()->str(), o.dynamic_shapes()->str());
  NativeExportConfig n;
  n.dynamic = true;
  EXPECT_EQ(AutoExportConfig::from_json(n.to_json())->to_json(), n.to_json());
}

TEST(ExportConfig, UnknownFormatListsTheKnownOnes) {
  try {
    AutoExportConfig::from_json(R"({"export_format": "tflite"})", "cfg.json");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "cfg.json")) << e.what();
    EXPECT_TRUE(contains(e.what(), "unknown export_format 'tflite'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "native")) << e.what();
    EXPECT_TRUE(contains(e.what(), "onnx")) << e.what();
    EXPECT_TRUE(contains(e.what(), "executorch")) << e.what();
  }
  try {
    AutoExporter::from_format("tflite");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "known formats: ")) << e.what();
    EXPECT_TRUE(contains(e.what(), "executorch")) << e.what();
  }
}

TEST(ExportConfig, BadKeysAndValuesAreNamed) {
  EXPECT_THROW(AutoExportConfig::from_json(R"({"dynamic": true})"),
               ValueError);  // no export_format
  try {
    AutoExportConfig::from_json(R"({"export_format": "native", "opset": 18})");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "unknown key 'opset' for export_format 'native'")) << e.what();
  }
  try {
    AutoExportConfig::from_json(R"({"export_format": "onnx", "opset": "eighteen"})");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "'opset' has the wrong type")) << e.what();
  }
  EXPECT_THROW(AutoExportConfig::from_json(R"({"export_format": "onnx", "opset": 12})"),
               ValueError);
  EXPECT_THROW(
      AutoExportConfig::from_json(R"({"export_format": "onnx", "external_data": "maybe"})"),
      ValueError);
  EXPECT_THROW(AutoExportConfig::from_json(R"({"export_format": "onnx", "dynamic": true,
      "dynamic_shapes": {"input_ids": {"0": "batch"}}})"),
               ValueError);
  EXPECT_THROW(AutoExportConfig::from_json("{not json"), ValueError);
}

TEST(ExportConfig, AutoExporterPicksTheExporterOfTheFormat) {
  auto onnx =
      AutoExporter::from_config(*AutoExportConfig::from_json(R"({"export_format": "onnx"})"));
  EXPECT_EQ(onnx->backend(), "onnx");
  EXPECT_NE(dynamic_cast<OnnxExporter*>(onnx.get()), nullptr);
  auto native = AutoExporter::from_config(NativeExportConfig());
  EXPECT_EQ(native->backend(), "native");
  EXPECT_NE(dynamic_cast<NativeExporter*>(native.get()), nullptr);
}

TEST(ExportConfig, PerComponentConfigsNameTheMissingComponent) {
  auto decode = std::make_shared<OnnxConfig>();
  decode->opset = 21;
  ComponentConfigs per({{"decode", decode}, {"lm_head", std::make_shared<NativeExportConfig>()}});
  EXPECT_EQ(dynamic_cast<const OnnxConfig&>(per.at("decode")).opset, 21);
  try {
    per.at("image_encoder");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_TRUE(contains(e.what(), "no config for component 'image_encoder'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "decode, lm_head")) << e.what();
  }
  ComponentConfigs all{NativeExportConfig()};
  EXPECT_EQ(all.at("anything").export_format(), "native");
}

}  // namespace
}  // namespace ingot::exporters
