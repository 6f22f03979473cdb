#include "ingot/exporters/openvino/openvino_config.h"

#include "ingot/exporters/config_json.h"

namespace ingot::exporters {

std::string OpenVINOConfig::to_json() const {
  nlohmann::ordered_json j = native_config_json(*this);
  j["compress_to_fp16"] = compress_to_fp16;
  j["stateful"] = stateful;
  j["output_path"] = output_path;
  return j.dump(2);
}

namespace {

void read_openvino_keys(const nlohmann::ordered_json& j, NativeExportConfig& config,
                        const std::string& origin) {
  auto& c = static_cast<OpenVINOConfig&>(config);
  read_config_key(j, "compress_to_fp16", c.compress_to_fp16, origin);
  read_config_key(j, "stateful", c.stateful, origin);
  read_config_key(j, "output_path", c.output_path, origin);
}

const bool kRegistered = [] {
  register_config_format("openvino", {{"compress_to_fp16", "stateful", "output_path"},
                                      [] { return std::make_unique<OpenVINOConfig>(); },
                                      read_openvino_keys});
  return true;
}();

}  // namespace

}  // namespace ingot::exporters
