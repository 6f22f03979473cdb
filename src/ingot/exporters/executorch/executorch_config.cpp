#include "ingot/exporters/executorch/executorch_config.h"

#include "ingot/exporters/config_json.h"

namespace ingot::exporters {

std::string ExecutorchConfig::to_json() const {
  nlohmann::ordered_json j = native_config_json(*this);
  j["backend"] = backend;
  j["alloc_graph_input"] = alloc_graph_input;
  j["alloc_graph_output"] = alloc_graph_output;
  j["alloc_mutable_buffers"] = alloc_mutable_buffers;
  j["output_path"] = output_path;
  return j.dump(2);
}

namespace {

void read_executorch_keys(const nlohmann::ordered_json& j, NativeExportConfig& config,
                          const std::string& origin) {
  auto& c = static_cast<ExecutorchConfig&>(config);
  read_config_key(j, "backend", c.backend, origin);
  read_config_key(j, "alloc_graph_input", c.alloc_graph_input, origin);
  read_config_key(j, "alloc_graph_output", c.alloc_graph_output, origin);
  read_config_key(j, "alloc_mutable_buffers", c.alloc_mutable_buffers, origin);
  read_config_key(j, "output_path", c.output_path, origin);
  INGOT_CHECK(c.backend == "portable" || c.backend == "xnnpack", ValueError,
              "[AutoExportConfig] {}: backend is \"portable\" or \"xnnpack\", got \"{}\"", origin,
              c.backend);
}

const bool kRegistered = [] {
  register_config_format("executorch", {{"backend", "alloc_graph_input", "alloc_graph_output",
                                         "alloc_mutable_buffers", "output_path"},
                                        [] { return std::make_unique<ExecutorchConfig>(); },
                                        read_executorch_keys});
  return true;
}();

}  // namespace

}  // namespace ingot::exporters
