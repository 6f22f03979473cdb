// Running ExecuTorch's C++ runtime, the one the pinned `executorch` wheel ships (include/,
// lib/libexecutorch.so, the CPU kernels, the XNNPACK backend), from the tests and the
// benchmarks: tools/executorch/<name>.cpp compiled against it on first use, and a
// command runner. No gtest here (the benchmarks include it).
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "../venv_tool.h"

namespace ingot::testing::et {

namespace fs = std::filesystem;
using testing::run_command;
using testing::ToolResult;

// The reference venv, which pins executorch ($INGOT_REF_VENV or ~/.cache/ingot/ref-venv).
inline const VenvTool& tool() {
  static const VenvTool t{"reference (with executorch)", "INGOT_REF_VENV", "ref-venv",
                          "tools/executorch", "tools/reference/setup-venv"};
  return t;
}
inline fs::path venv_python() { return tool().python(); }

// The executorch package's directory in the venv (include/, lib/), or empty.
inline fs::path package_dir() {
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(tool().dir() / "lib", ec))
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

}  // namespace ingot::testing::et
