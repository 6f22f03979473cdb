// Running ExecuTorch's runtime (tools/executorch/*.py in the reference venv of
// tools/reference/setup-venv, which pins executorch) from the exporter tests. Without the
// venv, callers GTEST_SKIP with skip_reason().
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "et_cpp_judge.h"
#include "ingot/core/tensor.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/formats/npy.h"
#include "ingot/ops/functional/views.h"
#include "ingot/runtime/program_module.h"

namespace ingot::testing::et {

namespace fs = std::filesystem;

// The venv exists and has the pinned executorch in it.
inline bool have_venv() {
  if (!tool().exists()) return false;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(tool().dir() / "lib", ec))
    if (fs::exists(d.path() / "site-packages" / "executorch" / "runtime")) return true;
  return false;
}
inline std::string skip_reason() {
  return tool().skip_reason();
}
inline ToolResult run_tool(const std::string& script, const std::vector<std::string>& args) {
  return tool().run(script, args);
}
// build_cpp_judge from this source tree.
inline fs::path build_cpp_judge(const std::string& name, std::string& log) {
  return build_cpp_judge(source_dir(), name, log);
}

class ScratchDir : public testing::ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) : testing::ScratchDir("et_export", name) {}
};

// Input / expected-output cases for tools/executorch/run_cases.py: inputs and outputs by
// position in the method ("<k>_<name>.npy").
class Cases : CaseDirs {
 public:
  using CaseDirs::CaseDirs;
  // `want` may hold fewer outputs than the method has (by position). `keep` (an attention
  // mask [batch, seq]) limits the comparison of output 0 to the positions it keeps.
  void add(const std::vector<std::pair<std::string, Tensor>>& inputs,
           const std::vector<std::pair<size_t, std::pair<std::string, Tensor>>>& want,
           const Tensor& keep = Tensor()) {
    const fs::path c = next_case();
    for (size_t k = 0; k < inputs.size(); ++k)
      formats::save_npy((c / "in" / fmt::format("{}_{}.npy", k, inputs[k].first)).string(),
                        contiguous(inputs[k].second));
    for (const auto& [k, nt] : want)
      formats::save_npy((c / "want" / fmt::format("{}_{}.npy", k, nt.first)).string(),
                        contiguous(nt.second));
    if (keep.defined())
      formats::save_npy(
          (c / "want" / fmt::format("0_{}.keep.npy", want.at(0).second.first)).string(),
          contiguous(keep));
  }
  // This case list as one run of run_cases.py --batch (see run_batch).
  nlohmann::json batch_run(const std::string& tag, const fs::path& model, double atol = 1e-4,
                           double rtol = 0.0) const {
    return nlohmann::json{{"tag", tag}, {"args", run_cases_args(model, atol, rtol)}};
  }
  // Loads the program and runs every case; EXPECTs success and returns the summary.
  nlohmann::json run(const fs::path& model, double atol = 1e-4, double rtol = 0.0) const {
    ToolResult r = run_tool("run_cases.py", run_cases_args(model, atol, rtol));
    EXPECT_EQ(r.status, 0) << r.log;
    if (r.status == 0) std::cout << r.log;
    return r.summary.is_object() ? r.summary : nlohmann::json::object();
  }
};

// Adds one case per input set of `p`'s method (inputs by position) whose expected outputs
// are ingot's runtime's on the same program: the ExecuTorch == ingot judge.
inline void add_ingot_cases(Cases& cases, const exporters::ExecutorchProgram& p,
                            const std::vector<std::vector<Tensor>>& input_sets) {
  runtime::ProgramModule mod(p.program);
  for (const auto& inputs : input_sets) {
    const std::vector<Tensor> outs = mod.run(inputs);
    std::vector<std::pair<std::string, Tensor>> in;
    for (size_t i = 0; i < inputs.size(); ++i) in.push_back({p.input_names.at(i), inputs[i]});
    std::vector<std::pair<size_t, std::pair<std::string, Tensor>>> want;
    for (size_t k = 0; k < outs.size(); ++k)
      want.push_back({k, {p.output_names.at(k), contiguous(outs[k])}});
    cases.add(in, want);
  }
}

// Runs several programs' cases (Cases::batch_run) in one Python process, so torch and the
// runtime load once; returns {tag: {"ok", "worst"}} (empty when the tool failed to run).
inline nlohmann::json run_batch(const fs::path& dir, const std::vector<nlohmann::json>& runs) {
  const fs::path file = dir / "runs.json";
  std::ofstream(file) << nlohmann::json(runs).dump();
  ToolResult r = run_tool("run_cases.py", {"--batch", file.string()});
  std::cout << r.log;
  if (!r.summary.is_object() || !r.summary.contains("runs")) {
    ADD_FAILURE() << "run_cases.py --batch gave no summary:\n" << r.log;
    return nlohmann::json::object();
  }
  return r.summary["runs"];
}

}  // namespace ingot::testing::et
