#include "ingot/models/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ingot::models {

namespace fs = std::filesystem;

Checkpoint Checkpoint::open_folder(const std::string& folder) {
  Checkpoint c;
  c.folder_ = folder;
  const fs::path dir(folder);
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(single)) {
    c.files_.push_back(formats::SafetensorsFile::open(single.string()));
    for (const auto& [name, e] : c.files_[0].entries()) c.where_[name] = 0;
    return c;
  }
  INGOT_CHECK(fs::exists(index), IoError,
              "[checkpoint] '{}' has neither model.safetensors nor model.safetensors.index.json "
              "(only safetensors weights are supported)", folder);
  nlohmann::json j;
  try {
    std::ifstream f(index);
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    INGOT_THROW(IoError, "[checkpoint] '{}' is not valid JSON: {}", index.string(), e.what());
  }
  INGOT_CHECK(j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(), IoError,
              "[checkpoint] '{}' has no 'weight_map' object", index.string());
  std::map<std::string, size_t> file_index;
  for (const auto& [name, file] : j["weight_map"].items()) {
    INGOT_CHECK(file.is_string(), IoError, "[checkpoint] '{}': weight_map entry '{}' is not a file name",
                index.string(), name);
    const std::string shard = file.get<std::string>();
    INGOT_CHECK(shard.find('/') == std::string::npos && shard.find("..") == std::string::npos,
                IoError, "[checkpoint] '{}': shard name '{}' must be a file in the folder",
                index.string(), shard);
    auto [it, inserted] = file_index.emplace(shard, c.files_.size());
    if (inserted) c.files_.push_back(formats::SafetensorsFile::open((dir / shard).string()));
    INGOT_CHECK(c.files_[it->second].contains(name), IoError,
                "[checkpoint] '{}' lists tensor '{}' in shard '{}', which does not contain it",
                index.string(), name, shard);
    c.where_[name] = it->second;
  }
  return c;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& [name, i] : where_) out.push_back(name);
  return out;
}

Tensor Checkpoint::tensor(const std::string& name) const {
  auto it = where_.find(name);
  INGOT_CHECK(it != where_.end(), IoError, "[checkpoint] '{}' has no tensor named '{}'", folder_,
              name);
  return files_[it->second].tensor(name);
}

size_t Checkpoint::nbytes() const {
  size_t n = 0;
  for (const auto& [name, i] : where_) {
    const auto& e = files_[i].entries().at(name);
    n += e.end - e.begin;
  }
  return n;
}

}  // namespace ingot::models
