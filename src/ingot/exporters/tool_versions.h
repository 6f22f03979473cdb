// The versions of the external tools the exporters' tests are pinned to, and the drift
// warning (seed 003: "HfExporter logs a warning when it detects drift"). Patches and fixes
// target the API surface and bugs of these versions; with other versions the export may
// still work, but nobody checked.
//
// The pins equal tools/onnx/requirements.txt (a test reads that file and compares).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ingot::exporters {

// tool name ("onnx", "onnxruntime", "numpy") -> pinned version.
const std::map<std::string, std::string>& pinned_tool_versions();

// One warning per tool whose found version differs from its pin:
//   "[exporters] warning: onnxruntime 1.31.0 differs from the pinned 1.32.0 ..."
// Tools without a pin are ignored.
std::vector<std::string> tool_version_drift(const std::map<std::string, std::string>& found);

// Where warnings go (default: stderr). Returns the previous sink.
using WarningSink = std::function<void(const std::string&)>;
WarningSink set_warning_sink(WarningSink sink);
void warn(const std::string& message);

// Reports every drift through warn(); returns how many tools drifted.
size_t warn_on_tool_version_drift(const std::map<std::string, std::string>& found);

}  // namespace ingot::exporters
