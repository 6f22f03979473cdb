// Running ONNX Runtime (tools/onnx/*.py in the venv of tools/onnx/setup-venv) from the
// exporter tests: input/expected .npy cases, one checker + ORT run per model, and the drift
// warning for the venv's versions. Without the venv, callers GTEST_SKIP with skip_reason().
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/exporters/tool_versions.h"
#include "ingot/formats/npy.h"
#include "venv_tool.h"

namespace ingot::testing::ort {

namespace fs = std::filesystem;
using testing::ToolResult;

inline const VenvTool& tool() {
  static const VenvTool t{"ONNX", "INGOT_ONNX_VENV", "onnx-venv", "tools/onnx",
                          "tools/onnx/setup-venv"};
  return t;
}
inline bool have_venv() { return tool().exists(); }
inline std::string skip_reason() { return tool().skip_reason(); }

// Runs tools/onnx/<script> in the venv; warns when its onnx / onnxruntime drifted from the pins.
inline ToolResult run_tool(const std::string& script, const std::vector<std::string>& args) {
  ToolResult r = tool().run(script, args);
  if (r.summary.is_object() && r.summary.contains("onnxruntime")) {
    exporters::warn_on_tool_version_drift({{"onnx", r.summary.value("onnx", "")},
                                           {"onnxruntime", r.summary.value("onnxruntime", "")}});
  }
  return r;
}

class ScratchDir : public testing::ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : testing::ScratchDir("onnx_export", name) {}
};

// Input / expected-output cases for tools/onnx/run_cases.py, by input and output name.
class Cases : CaseDirs {
 public:
  using CaseDirs::CaseDirs;
  void add(const std::map<std::string, Tensor>& inputs, const std::map<std::string, Tensor>& want) {
    const fs::path c = next_case();
    for (const auto& [name, t] : inputs)
      formats::save_npy((c / "in" / (name + ".npy")).string(), t);
    for (const auto& [name, t] : want)
      formats::save_npy((c / "want" / (name + ".npy")).string(), t);
  }
  // Checks the model and runs every case; EXPECTs success and returns the summary.
  nlohmann::json run(const fs::path& model, double atol = 1e-4, double rtol = 0.0) const {
    ToolResult r = run_tool("run_cases.py", run_cases_args(model, atol, rtol));
    EXPECT_EQ(r.status, 0) << r.log;
    return r.summary;
  }
};

}  // namespace ingot::testing::ort
