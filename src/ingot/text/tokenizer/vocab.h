// Token <-> id tables shared by the models.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ingot::text::tokenizer {

class JsonNode;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

using TokenMap = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

class Vocab {
 public:
  // Reads a {"token": id, ...} object; ids must be non-negative and unique.
  static Vocab from_json(const JsonNode& node);

  const int64_t* find(std::string_view token) const {
    auto it = ids_.find(token);
    return it == ids_.end() ? nullptr : &it->second;
  }
  const std::string* token(int64_t id) const {
    auto it = tokens_.find(id);
    return it == tokens_.end() ? nullptr : &it->second;
  }
  size_t size() const { return ids_.size(); }
  const TokenMap& ids() const { return ids_; }

 private:
  TokenMap ids_;
  std::unordered_map<int64_t, std::string> tokens_;
};

}  // namespace ingot::text::tokenizer
