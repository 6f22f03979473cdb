#include "ingot/models/gguf_folder.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/core/version.h"
#include "ingot/formats/gguf.h"
#include "ingot/models/gguf_config.h"
#include "ingot/models/gguf_tokenizer.h"

namespace ingot::models {
namespace {

namespace fs = std::filesystem;

// Bump when what gguf_model_folder writes changes (config, tokenizer conversion).
constexpr int kFolderRevision = 1;

std::vector<std::string> gguf_files(const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    if (e.path().extension() == ".gguf" && e.is_regular_file()) out.push_back(e.path().string());
  }
  return out;
}

}  // namespace

std::optional<std::string> gguf_in_folder(const std::string& folder) {
  std::vector<std::string> files = gguf_files(folder);
  if (files.size() != 1) return std::nullopt;
  return files[0];
}

std::optional<std::string> gguf_source(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() == ".gguf") return path;
    return std::nullopt;
  }
  if (!fs::is_directory(path, ec) || fs::exists(fs::path(path) / "config.json"))
    return std::nullopt;
  std::vector<std::string> files = gguf_files(path);
  INGOT_CHECK(files.size() <= 1, IoError,
              "[gguf] '{}' holds {} .gguf files and no config.json; name the one to load", path,
              files.size());
  if (files.empty()) return std::nullopt;
  return files[0];
}

namespace {

fs::path cache_root() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "ingot" / "gguf";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/tmp") / ".cache" / "ingot" / "gguf";
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  INGOT_CHECK(f.good(), IoError, "[gguf] cannot write '{}'", p.string());
}

}  // namespace

std::string gguf_model_folder(const std::string& path) {
  std::optional<std::string> gguf = gguf_source(path);
  if (!gguf) return path;
  const fs::path file = fs::absolute(*gguf);
  const auto size = fs::file_size(file);
  const auto mtime = fs::last_write_time(file).time_since_epoch().count();
  // The ingot version and kFolderRevision are in the key too, so that a changed
  // conversion never reads a folder an older one made.
  const size_t key = std::hash<std::string>{}(
      fmt::format("{}|{}|{}|{}|{}", file.string(), size, mtime, version(), kFolderRevision));
  const fs::path folder = cache_root() / fmt::format("{}-{:016x}", file.stem().string(), key);
  if (fs::exists(folder / "config.json")) return folder.string();

  formats::GgufFile f = formats::GgufFile::open(file.string());
  // Written into a fresh folder and renamed into place, so a reader never sees half of it.
  const fs::path tmp = folder.string() + fmt::format(".tmp{}", ::getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  fs::create_symlink(file, tmp / "model.gguf");
  if (f.has("tokenizer.ggml.model")) {
    write_text(tmp / "tokenizer.json", gguf_tokenizer_json(f));
    write_text(tmp / "tokenizer_config.json", gguf_tokenizer_config_json(f));
  }
  write_text(tmp / "config.json", gguf_config_json(f));  // last: marks the folder complete
  std::error_code ec;
  fs::rename(tmp, folder, ec);
  if (ec) fs::remove_all(tmp);  // another process made it first
  return folder.string();
}

}  // namespace ingot::models
