// Reading a Hugging Face config.json with errors that name the file and the key.
//
// Architecture files read their hyper-parameters through ConfigReader; a missing or
// mistyped key is an IoError such as
//   "[config] 'qwen3/config.json': key 'num_attention_heads' is missing (an integer)".
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingot/nn/rope_config.h"

namespace ingot::models {

// The rotary parameters nn/ builds embeddings from; ConfigReader::rope() reads them.
using RopeConfig = nn::RopeConfig;

class ConfigReader {
 public:
  // Parses `path` (a config.json); throws IoError naming it when unreadable or invalid.
  static ConfigReader from_file(const std::string& path);
  static ConfigReader from_json_text(const std::string& text, const std::string& origin);
  ~ConfigReader();
  ConfigReader(ConfigReader&&) noexcept;

  const std::string& origin() const { return origin_; }
  bool has(const std::string& key) const;  // present and not null
  int64_t get_int(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  std::optional<int64_t> get_optional_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // A list of strings / integers; empty when the key is absent or null.
  std::vector<std::string> get_string_list(const std::string& key) const;
  std::vector<int64_t> get_int_list(const std::string& key) const;
  // `architectures[0]`; IoError when absent.
  std::string architecture() const;
  // Rotary parameters; `layer_type` picks a per-layer-type set (Gemma 3's
  // rope_parameters {"full_attention": {...}, "sliding_attention": {...}}, or its older
  // rope_local_base_freq for sliding layers). Without one, the "full_attention" set.
  RopeConfig rope(const std::string& layer_type = "") const;
  // The nested object `key` (a multimodal model's text_config / vision_config) as a
  // reader of its own, whose origin names the key; IoError when absent or not an object.
  ConfigReader child(const std::string& key) const;

 private:
  ConfigReader(std::unique_ptr<nlohmann::json> json, std::string origin);
  const nlohmann::json* find(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const char* expected) const;

  std::unique_ptr<nlohmann::json> json_;
  std::string origin_;
};

}  // namespace ingot::models
