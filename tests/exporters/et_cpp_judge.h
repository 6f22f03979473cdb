// Running ExecuTorch's C++ runtime, the one the pinned `executorch` wheel ships (include/,
// lib/libexecutorch.so, the CPU kernels, the XNNPACK backend), from the tests and the
// benchmarks: tools/executorch/<name>.cpp compiled against it on first use, and a
// command runner. No gtest here (the benchmarks include it).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace ingot::testing::et {

namespace fs = std::filesystem;

// The reference venv's python ($INGOT_REF_VENV or ~/.cache/ingot/ref-venv).
inline fs::path venv_python() {
  const char* venv = std::getenv("INGOT_REF_VENV");
  const char* home = std::getenv("HOME");
  fs::path dir = venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/ref-venv";
  return dir / "bin" / "python";
}

struct ToolResult {
  int status = -1;
  std::string log;
  nlohmann::json summary;  // the last line of stdout, when it is JSON
};

// The executorch package's directory in the venv (include/, lib/), or empty.
inline fs::path package_dir() {
  const fs::path lib = venv_python().parent_path().parent_path() / "lib";
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(lib, ec))
    if (fs::exists(d.path() / "site-packages" / "executorch" / "include"))
      return d.path() / "site-packages" / "executorch";
  return {};
}

// Compiles tools/executorch/<name>.cpp against the C++ runtime the wheel ships (its
// headers, libexecutorch, the CPU kernels and the XNNPACK backend) into the temp
// directory, once per source content. Returns the binary, or empty with `log` saying why.
inline fs::path build_cpp_judge(const fs::path& source_root, const std::string& name,
                                std::string& log) {
  const fs::path pkg = package_dir();
  if (pkg.empty()) {
    log = "the executorch wheel ships no include/ directory";
    return {};
  }
  const fs::path src = source_root / "tools/executorch" / (name + ".cpp");
  std::ifstream in(src, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  const fs::path bin = fs::temp_directory_path() /
                       fmt::format("ingot_et_{}_{:x}", name, std::hash<std::string>{}(text + pkg.string()));
  if (fs::exists(bin)) return bin;
  const std::string lib = (pkg / "lib").string();
  const std::string tmp = bin.string() + "." + std::to_string(::getpid());
  const std::string cmd = fmt::format(
      "c++ -std=c++17 -O2 -DC10_USING_CUSTOM_GENERATED_MACROS -DET_EVENT_TRACER_ENABLED "
      "-I'{0}/include' -I'{0}/include/executorch/runtime/core/portable_type/c10' '{1}' -o '{2}' "
      "-L'{3}' -Wl,--no-as-needed -lexecutorch -lexecutorch_kernels_optimized "
      "-lexecutorch_backend_xnnpack -Wl,-rpath,'{3}' 2>&1",
      pkg.string(), src.string(), tmp, lib);
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) log.append(buf, n);
  if (::pclose(p) != 0) {
    log = "compiling " + src.string() + " failed: " + log;
    return {};
  }
  fs::rename(tmp, bin);
  return bin;
}

// Runs a command line; the status and its output (stdout + stderr), the last line parsed
// as JSON when it is.
inline ToolResult run_command(const std::string& cmd) {
  ToolResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) r.log.append(buf, n);
  int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  size_t end = r.log.find_last_not_of('\n');
  if (end != std::string::npos) {
    size_t start = r.log.rfind('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    r.summary = nlohmann::json::parse(r.log.substr(start, end + 1 - start), nullptr, false);
  }
  return r;
}

}  // namespace ingot::testing::et
