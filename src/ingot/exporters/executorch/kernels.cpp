#include "ingot/exporters/executorch/kernels.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "ingot/core/error.h"

namespace ingot::exporters::executorch {

namespace {

struct Entry {
  KernelFn fn;
  std::string where;
};

std::map<std::string, Entry, std::less<>>& table() {
  static std::map<std::string, Entry, std::less<>> t;
  return t;
}

}  // namespace

void register_kernel(const std::string& op, KernelFn fn, std::source_location where) {
  const std::string at = fmt::format(
      "{}:{}", std::filesystem::path(where.file_name()).filename().string(), where.line());
  auto [it, inserted] = table().emplace(op, Entry{std::move(fn), at});
  INGOT_CHECK(inserted, InternalError, "[executorch] op '{}' has two kernel mappings ({} and {})",
              op, it->second.where, at);
}

const KernelFn* find_kernel(const std::string& op) {
  auto it = table().find(op);
  return it == table().end() ? nullptr : &it->second.fn;
}

std::vector<std::string> mapped_ops() {
  std::vector<std::string> out;
  for (const auto& [name, e] : table()) out.push_back(name);
  return out;
}

}  // namespace ingot::exporters::executorch
