// Running another runtime from the tests: the Python scripts of one tools/<area> folder,
// in the pinned venv its setup script creates, fed with .npy case directories. The ONNX
// Runtime, OpenVINO and ExecuTorch harnesses (tests/exporters/*_harness.h) are thin
// layers over this. Without the venv, callers GTEST_SKIP with the tool's skip reason.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ingot::testing {

namespace fs = std::filesystem;

// The repository root (ctest sets INGOT_SOURCE_DIR; test binaries know their fixtures).
inline fs::path source_dir() {
  if (const char* s = std::getenv("INGOT_SOURCE_DIR")) return s;
#ifdef INGOT_FIXTURES_DIR
  return fs::path(INGOT_FIXTURES_DIR) / ".." / "..";
#else
  return fs::current_path();
#endif
}

struct ToolResult {
  int status = -1;
  std::string log;         // stdout and stderr
  nlohmann::json summary;  // the last line of the log, when it is JSON (else discarded)
};

// Runs a shell command line: its exit status and output (stdout + stderr), the last line
// parsed as JSON when it is.
inline ToolResult run_command(const std::string& cmd) {
  ToolResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) r.log.append(buf, n);
  const int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const size_t end = r.log.find_last_not_of('\n');
  if (end != std::string::npos) {
    size_t start = r.log.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    r.summary = nlohmann::json::parse(r.log.substr(start, end + 1 - start), nullptr, false);
  }
  return r;
}

// One venv and the folder of scripts that run in it.
struct VenvTool {
  std::string label;      // "ONNX", in skip reasons
  std::string env_var;    // overrides the venv's directory
  std::string venv_name;  // the default directory, under ~/.cache/ingot
  std::string scripts;    // "tools/onnx": where run() finds its scripts
  std::string setup;      // the script that creates the venv

  fs::path dir() const {
    if (const char* v = std::getenv(env_var.c_str())) return v;
    const char* home = std::getenv("HOME");
    return fs::path(home ? home : "/") / ".cache/ingot" / venv_name;
  }
  fs::path python() const { return dir() / "bin" / "python"; }
  bool exists() const { return fs::exists(python()); }
  std::string skip_reason() const {
    return "no " + label + " venv at " + dir().string() + " (create it with " + setup + ")";
  }

  // Runs <scripts>/<script> with `args` (each quoted) in the venv.
  ToolResult run(const std::string& script, const std::vector<std::string>& args) const {
    std::string cmd =
        "'" + python().string() + "' '" + (source_dir() / scripts / script).string() + "'";
    for (const auto& a : args) cmd += " '" + a + "'";
    return run_command(cmd);
  }
};

// A scratch directory for one test, removed at the end unless INGOT_KEEP_SCRATCH=1 (to
// look at a failing model).
class ScratchDir {
 public:
  ScratchDir(const std::string& prefix, const std::string& name)
      : path_(fs::temp_directory_path() /
              ("ingot_" + prefix + "_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    if (std::getenv("INGOT_KEEP_SCRATCH") == nullptr) fs::remove_all(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Case directories (case<k>/in, case<k>/want, ...) for a tools/<area>/run_cases.py, which
// takes `MODEL --atol A --rtol R --case DIR...`.
class CaseDirs {
 public:
  explicit CaseDirs(fs::path dir) : dir_(std::move(dir)) {}

  // The next case's directory, with in/ and want/ created.
  fs::path next_case() {
    fs::path c = dir_ / ("case" + std::to_string(dirs_.size()));
    fs::create_directories(c / "in");
    fs::create_directories(c / "want");
    dirs_.push_back(c.string());
    return c;
  }

  std::vector<std::string> run_cases_args(const fs::path& model, double atol, double rtol) const {
    std::vector<std::string> args{model.string(), "--atol", std::to_string(atol), "--rtol",
                                  std::to_string(rtol)};
    for (const auto& d : dirs_) {
      args.push_back("--case");
      args.push_back(d);
    }
    return args;
  }

 private:
  fs::path dir_;
  std::vector<std::string> dirs_;
};

}  // namespace ingot::testing
