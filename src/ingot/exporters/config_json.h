// The JSON side of export configs, for the config readers of each format
// (AutoExportConfig and the backends' register_config_format entries).
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ingot/core/error.h"
#include "ingot/exporters/config.h"

namespace ingot::exporters {

// Reads `key` of `j` into `out` when present and not null, checking its JSON type.
template <typename T>
void read_config_key(const nlohmann::ordered_json& j, const char* key, T& out,
                     const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->template get<T>();
  } catch (const nlohmann::ordered_json::exception&) {
    INGOT_THROW(ValueError, "[AutoExportConfig] {}: '{}' has the wrong type ({})", origin, key,
                it->dump());
  }
}

// The native fields of `config` (what NativeExportConfig::to_json writes), for a
// backend's to_json to extend.
nlohmann::ordered_json native_config_json(const NativeExportConfig& config);

}  // namespace ingot::exporters
