// A position inside a tokenizer.json document, for reading fields with errors that name
// the file and the field path ("[tokenizer] 'qwen/tokenizer.json': field
// 'pre_tokenizer.pretokenizers[0].pattern' should be ...").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ingot::text::tokenizer {

class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, std::string path, const std::string& origin)
      : value_(&value), path_(std::move(path)), origin_(&origin) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& origin() const { return *origin_; }

  // The child `key`, or nullopt when it is absent or null.
  std::optional<JsonNode> find(std::string_view key) const;
  // The child `key`; IoError when absent or null.
  JsonNode at(std::string_view key) const;
  // Element `index` of an array node.
  JsonNode at(size_t index) const;
  size_t array_size() const;  // IoError unless an array

  std::string get_string() const;  // this node as a string
  std::string string(std::string_view key) const;
  std::string string(std::string_view key, const std::string& fallback) const;
  bool boolean(std::string_view key) const;
  bool boolean(std::string_view key, bool fallback) const;
  int64_t integer(std::string_view key) const;
  int64_t integer(std::string_view key, int64_t fallback) const;
  std::optional<bool> optional_boolean(std::string_view key) const;
  // The single code point of a one-character string field (Rust `char`).
  char32_t character(std::string_view key) const;
  // The component's "type" field.
  std::string type() const { return string("type"); }

  // IoError: "[tokenizer] '<origin>': field '<path>' <problem>".
  [[noreturn]] void fail(std::string_view problem) const;
  // NotSupportedError for a component type ingot does not implement.
  [[noreturn]] void unsupported(std::string_view kind, std::string_view type,
                                std::string_view supported) const;

 private:
  std::string child_path(std::string_view key) const;

  const nlohmann::json* value_;
  std::string path_;
  const std::string* origin_;
};

}  // namespace ingot::text::tokenizer
