// Running tools/reference/check_pt2.py (torch.export.load + .module() in the reference
// venv) from the .pt2 writer tests, and the scratch folders its cases live in.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "ingot/ir/pytree.h"

namespace ingot::testing::pt2 {

namespace fs = std::filesystem;

inline fs::path ref_python() {
  const char* venv = std::getenv("INGOT_REF_VENV");
  const char* home = std::getenv("HOME");
  const fs::path dir =
      venv ? fs::path(venv) : fs::path(home ? home : "/") / ".cache/ingot/ref-venv";
  return dir / "bin" / "python";
}

inline bool have_torch() {
  if (!fs::exists(ref_python())) return false;
  const std::string cmd = "'" + ref_python().string() + "' -c 'import torch' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

struct ToolRun {
  int status = -1;
  std::string log;
  nlohmann::json summary;  // check_pt2's last line: {"ok", "torch", "worst", "errors"}
};

// check_pt2.py --pair MODEL DIR ... --atol atol.
inline ToolRun check_pt2(const std::vector<std::pair<fs::path, fs::path>>& pairs, double atol) {
  const char* src_env = std::getenv("INGOT_SOURCE_DIR");
  const fs::path src = src_env ? fs::path(src_env) : fs::path(INGOT_FIXTURES_DIR) / ".." / "..";
  std::string cmd = "'" + ref_python().string() + "' '" +
                    (src / "tools/reference/check_pt2.py").string() + "' --atol " +
                    std::to_string(atol);
  for (const auto& [m, d] : pairs) cmd += " --pair '" + m.string() + "' '" + d.string() + "'";
  cmd += " 2>&1";
  ToolRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) r.log.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  const size_t end = r.log.find_last_not_of('\n');
  const size_t start = end == std::string::npos ? 0 : r.log.rfind('\n', end);
  r.summary = nlohmann::json::parse(r.log.substr(start == std::string::npos ? 0 : start + 1),
                                    nullptr, false);
  return r;
}

// A folder under the system temp dir, removed with its contents at the end.
class Scratch {
 public:
  explicit Scratch(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("ingot_pt2_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A static input value as check_pt2 reads it (JSON; null for None).
inline std::string static_json(const StaticValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "null";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return nlohmann::json(*d).dump();
  if (auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return nlohmann::json(std::get<std::string>(v)).dump();
}

}  // namespace ingot::testing::pt2
