// Running OpenVINO (tools/openvino/*.py in the venv of tools/openvino/setup-venv) from the
// exporter tests: input/expected .npy cases, one read + compile per model. Without the
// venv, callers GTEST_SKIP with skip_reason().
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/formats/npy.h"
#include "venv_tool.h"

namespace ingot::testing::ov {

namespace fs = std::filesystem;
using testing::ToolResult;

inline const VenvTool& tool() {
  static const VenvTool t{"OpenVINO", "INGOT_OV_VENV", "ov-venv", "tools/openvino",
                          "tools/openvino/setup-venv"};
  return t;
}
inline bool have_venv() { return tool().exists(); }
inline std::string skip_reason() { return tool().skip_reason(); }
inline ToolResult run_tool(const std::string& script, const std::vector<std::string>& args) {
  return tool().run(script, args);
}

class ScratchDir : public testing::ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : testing::ScratchDir("ov_export", name) {}
};

// Input / expected-output cases for tools/openvino/run_cases.py, by input and output name.
class Cases : CaseDirs {
 public:
  using CaseDirs::CaseDirs;
  // `masks` (by output name, bool over the output's leading dims) restrict the comparison.
  void add(const std::map<std::string, Tensor>& inputs, const std::map<std::string, Tensor>& want,
           const std::map<std::string, Tensor>& masks = {}) {
    const fs::path c = next_case();
    for (const auto& [name, t] : inputs)
      formats::save_npy((c / "in" / (name + ".npy")).string(), t);
    for (const auto& [name, t] : want)
      formats::save_npy((c / "want" / (name + ".npy")).string(), t);
    if (!masks.empty()) fs::create_directories(c / "mask");
    for (const auto& [name, t] : masks)
      formats::save_npy((c / "mask" / (name + ".npy")).string(), t);
  }
  // A case whose inputs OpenVINO must refuse (a size outside a Parameter's interval).
  void add_refused(const std::map<std::string, Tensor>& inputs) {
    const fs::path c = next_case();
    for (const auto& [name, t] : inputs)
      formats::save_npy((c / "in" / (name + ".npy")).string(), t);
    std::ofstream(c / "refused") << "expected to be refused\n";
  }
  // Reads, compiles and runs every case; EXPECTs success and returns the summary.
  nlohmann::json run(const fs::path& model, double atol = 1e-4, double rtol = 0.0) const {
    ToolResult r = run_tool("run_cases.py", run_cases_args(model, atol, rtol));
    EXPECT_EQ(r.status, 0) << r.log;
    return r.summary;
  }
};

}  // namespace ingot::testing::ov
