#include "ingot/exporters/onnx/onnx_config.h"

#include "ingot/exporters/config_json.h"
#include "ingot/exporters/onnx/version.h"

namespace ingot::exporters {

std::string OnnxConfig::to_json() const {
  nlohmann::ordered_json j = native_config_json(*this);
  j["opset"] = opset;
  j["external_data"] = external_data;
  j["external_threshold"] = external_threshold;
  j["optimize"] = optimize;
  j["quantized_matmul"] = quantized_matmul;
  j["genai"] = genai;
  j["output_path"] = output_path;
  return j.dump(2);
}

namespace {

void read_onnx_keys(const nlohmann::ordered_json& j, NativeExportConfig& config,
                    const std::string& origin) {
  auto& c = static_cast<OnnxConfig&>(config);
  read_config_key(j, "opset", c.opset, origin);
  read_config_key(j, "external_data", c.external_data, origin);
  read_config_key(j, "external_threshold", c.external_threshold, origin);
  read_config_key(j, "optimize", c.optimize, origin);
  read_config_key(j, "output_path", c.output_path, origin);
  read_config_key(j, "quantized_matmul", c.quantized_matmul, origin);
  read_config_key(j, "genai", c.genai, origin);
  INGOT_CHECK(c.quantized_matmul == "matmul_nbits" || c.quantized_matmul == "dequantize_linear",
              ValueError,
              "[AutoExportConfig] {}: quantized_matmul is \"matmul_nbits\" or "
              "\"dequantize_linear\", got \"{}\"",
              origin, c.quantized_matmul);
  onnx::ir_version_for_opset(c.opset);  // range check with the supported opsets
  INGOT_CHECK(
      c.external_data == "auto" || c.external_data == "always" || c.external_data == "never",
      ValueError,
      "[AutoExportConfig] {}: external_data is \"auto\", \"always\" or \"never\", got \"{}\"",
      origin, c.external_data);
  INGOT_CHECK(c.external_threshold >= 0, ValueError,
              "[AutoExportConfig] {}: external_threshold must be >= 0", origin);
}

const bool kRegistered = [] {
  register_config_format("onnx", {{"opset", "external_data", "external_threshold", "optimize",
                                   "output_path", "quantized_matmul", "genai"},
                                  [] { return std::make_unique<OnnxConfig>(); },
                                  read_onnx_keys});
  return true;
}();

}  // namespace

}  // namespace ingot::exporters
