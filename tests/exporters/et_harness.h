// Running ExecuTorch's runtime (tools/executorch/*.py in the reference venv of
// tools/reference/setup-venv, which pins executorch) from the exporter tests. Without the
// venv, callers GTEST_SKIP with skip_reason().
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "et_cpp_judge.h"
#include "ingot/core/tensor.h"
#include "ingot/models/npy.h"
#include "ingot/ops/functional/views.h"

namespace ingot::testing::et {

namespace fs = std::filesystem;

inline fs::path source_dir() {
  if (const char* s = std::getenv("INGOT_SOURCE_DIR")) return s;
  return fs::path(INGOT_FIXTURES_DIR) / ".." / "..";
}

// The venv exists and has the pinned executorch in it.
inline bool have_venv() {
  if (!fs::exists(venv_python())) return false;
  const fs::path lib = venv_python().parent_path().parent_path() / "lib";
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(lib, ec))
    if (fs::exists(d.path() / "site-packages" / "executorch" / "runtime")) return true;
  return false;
}

inline std::string skip_reason() {
  return "no reference venv with executorch at " +
         venv_python().parent_path().parent_path().string() +
         " (create it with tools/reference/setup-venv)";
}

// Runs tools/executorch/<script> with `args` (each quoted) in the venv.
inline ToolResult run_tool(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = "'" + venv_python().string() + "' '" +
                    (source_dir() / "tools/executorch" / script).string() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  return run_command(cmd);
}

// build_cpp_judge from this source tree.
inline fs::path build_cpp_judge(const std::string& name, std::string& log) {
  return build_cpp_judge(source_dir(), name, log);
}

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    path_ =
        fs::temp_directory_path() / ("ingot_et_export_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Input / expected-output cases for tools/executorch/run_cases.py: inputs and outputs by
// position in the method ("<k>_<name>.npy").
class Cases {
 public:
  explicit Cases(fs::path dir) : dir_(std::move(dir)) {}
  // `want` may hold fewer outputs than the method has (by position). `keep` (an attention
  // mask [batch, seq]) limits the comparison of output 0 to the positions it keeps.
  void add(const std::vector<std::pair<std::string, Tensor>>& inputs,
           const std::vector<std::pair<size_t, std::pair<std::string, Tensor>>>& want,
           const Tensor& keep = Tensor()) {
    fs::path c = dir_ / ("case" + std::to_string(count_++));
    fs::create_directories(c / "in");
    fs::create_directories(c / "want");
    for (size_t k = 0; k < inputs.size(); ++k)
      models::save_npy((c / "in" / fmt::format("{}_{}.npy", k, inputs[k].first)).string(),
                       contiguous(inputs[k].second));
    for (const auto& [k, nt] : want)
      models::save_npy((c / "want" / fmt::format("{}_{}.npy", k, nt.first)).string(),
                       contiguous(nt.second));
    if (keep.defined())
      models::save_npy(
          (c / "want" / fmt::format("0_{}.keep.npy", want.at(0).second.first)).string(),
          contiguous(keep));
    dirs_.push_back(c.string());
  }
  nlohmann::json run(const fs::path& model, double atol = 1e-4, double rtol = 0.0) const {
    std::vector<std::string> args{model.string(), "--atol", std::to_string(atol), "--rtol",
                                  std::to_string(rtol)};
    for (const auto& d : dirs_) {
      args.push_back("--case");
      args.push_back(d);
    }
    ToolResult r = run_tool("run_cases.py", args);
    EXPECT_EQ(r.status, 0) << r.log;
    if (r.status == 0) std::cout << r.log;
    return r.summary.is_object() ? r.summary : nlohmann::json::object();
  }

 private:
  fs::path dir_;
  std::vector<std::string> dirs_;
  int count_ = 0;
};

}  // namespace ingot::testing::et
