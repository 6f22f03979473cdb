// Running OpenVINO (through tools/openvino/*.py in the venv of tools/openvino/setup-venv)
// from the exporter tests: input/expected .npy cases, one read + compile per model.
// Without the venv, callers GTEST_SKIP with skip_reason().
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"
#include "ingot/models/npy.h"

namespace ingot::testing::ov {

namespace fs = std::filesystem;

inline fs::path source_dir() {
  if (const char* s = std::getenv("INGOT_SOURCE_DIR")) return s;
  return fs::path(INGOT_FIXTURES_DIR) / ".." / "..";
}

inline fs::path venv_python() {
  const char* venv = std::getenv("INGOT_OV_VENV");
  const char* home = std::getenv("HOME");
  fs::path dir = venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/ov-venv";
  return dir / "bin" / "python";
}

inline bool have_venv() {
  return fs::exists(venv_python());
}

inline std::string skip_reason() {
  return "no OpenVINO venv at " + venv_python().parent_path().parent_path().string() +
         " (create it with tools/openvino/setup-venv)";
}

struct ToolResult {
  int status = -1;
  std::string log;
  nlohmann::json summary;  // the last line of stdout, when it is JSON
};

// Runs tools/openvino/<script> with `args` (each quoted) in the venv.
inline ToolResult run_tool(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = "'" + venv_python().string() + "' '" +
                    (source_dir() / "tools/openvino" / script).string() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  ToolResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) r.log.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t end = r.log.find_last_not_of('\n');
  std::string last;
  if (end != std::string::npos) {
    size_t start = r.log.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    last = r.log.substr(start, end + 1 - start);
  }
  r.summary = nlohmann::json::parse(last, nullptr, false);
  return r;
}

// A scratch directory for one test, removed at the end.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name) {
    path_ =
        fs::temp_directory_path() / ("ingot_ov_export_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  // INGOT_OV_KEEP=1 keeps the files (to look at a failing model).
  ~ScratchDir() {
    if (std::getenv("INGOT_OV_KEEP") == nullptr) fs::remove_all(path_);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Input / expected-output cases for tools/openvino/run_cases.py.
class Cases {
 public:
  explicit Cases(fs::path dir) : dir_(std::move(dir)) {}
  // `masks` (by output name, bool over the output's leading dims) restrict the comparison.
  void add(const std::map<std::string, Tensor>& inputs, const std::map<std::string, Tensor>& want,
           const std::map<std::string, Tensor>& masks = {}) {
    fs::path c = dir_ / ("case" + std::to_string(count_++));
    fs::create_directories(c / "in");
    fs::create_directories(c / "want");
    for (const auto& [name, t] : inputs) models::save_npy((c / "in" / (name + ".npy")).string(), t);
    for (const auto& [name, t] : want) models::save_npy((c / "want" / (name + ".npy")).string(), t);
    if (!masks.empty()) fs::create_directories(c / "mask");
    for (const auto& [name, t] : masks)
      models::save_npy((c / "mask" / (name + ".npy")).string(), t);
    dirs_.push_back(c.string());
  }
  // A case whose inputs OpenVINO must refuse (a size outside a Parameter's interval).
  void add_refused(const std::map<std::string, Tensor>& inputs) {
    fs::path c = dir_ / ("case" + std::to_string(count_++));
    fs::create_directories(c / "in");
    for (const auto& [name, t] : inputs) models::save_npy((c / "in" / (name + ".npy")).string(), t);
    std::ofstream(c / "refused") << "expected to be refused\n";
    dirs_.push_back(c.string());
  }
  // Reads, compiles and runs every case; EXPECTs success and returns the summary.
  nlohmann::json run(const fs::path& model, double atol = 1e-4, double rtol = 0.0) const {
    std::vector<std::string> args{model.string(), "--atol", std::to_string(atol), "--rtol",
                                  std::to_string(rtol)};
    for (const auto& d : dirs_) {
      args.push_back("--case");
      args.push_back(d);
    }
    ToolResult r = run_tool("run_cases.py", args);
    EXPECT_EQ(r.status, 0) << r.log;
    return r.summary;
  }

 private:
  fs::path dir_;
  std::vector<std::string> dirs_;
  int count_ = 0;
};

}  // namespace ingot::testing::ov
