#include "ingot/exporters/tool_versions.h"

#include <fmt/format.h>

#include <cstdio>

namespace ingot::exporters {

const std::map<std::string, std::string>& pinned_tool_versions() {
  static const std::map<std::string, std::string> pins = {
      {"onnx", "1.23.2"}, {"onnxruntime", "1.32.0"}, {"numpy", "2.4.6"}};
  return pins;
}

std::vector<std::string> tool_version_drift(const std::map<std::string, std::string>& found) {
  std::vector<std::string> out;
  for (const auto& [tool, version] : found) {
    auto pin = pinned_tool_versions().find(tool);
    if (pin == pinned_tool_versions().end() || pin->second == version) continue;
    out.push_back(
        fmt::format("[exporters] warning: {} {} differs from the pinned {} "
                    "(tools/onnx/requirements.txt); the exporter's "
                    "patches and fixes were checked against the pinned version",
                    tool, version, pin->second));
  }
  return out;
}

namespace {
WarningSink& sink() {
  static WarningSink s = [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };
  return s;
}
}  // namespace

WarningSink set_warning_sink(WarningSink s) {
  WarningSink previous = std::move(sink());
  sink() = std::move(s);
  return previous;
}

void warn(const std::string& message) {
  if (sink()) sink()(message);
}

size_t warn_on_tool_version_drift(const std::map<std::string, std::string>& found) {
  auto drift = tool_version_drift(found);
  for (const auto& m : drift) warn(m);
  return drift.size();
}

}  // namespace ingot::exporters
