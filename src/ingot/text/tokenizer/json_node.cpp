#include "ingot/text/tokenizer/json_node.h"

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/unicode.h"

namespace ingot::text::tokenizer {

std::string JsonNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::optional<JsonNode> JsonNode::find(std::string_view key) const {
  if (!value_->is_object()) fail("should be a JSON object");
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonNode(*it, child_path(key), *origin_);
}

JsonNode JsonNode::at(std::string_view key) const {
  auto child = find(key);
  if (!child) {
    INGOT_THROW(IoError, "[tokenizer] '{}': field '{}' is missing", *origin_, child_path(key));
  }
  return *child;
}

JsonNode JsonNode::at(size_t index) const {
  if (!value_->is_array() || index >= value_->size()) fail("should be an array");
  return JsonNode((*value_)[index], fmt::format("{}[{}]", path_, index), *origin_);
}

size_t JsonNode::array_size() const {
  if (!value_->is_array()) fail("should be an array");
  return value_->size();
}

std::string JsonNode::get_string() const {
  if (!value_->is_string()) fail("should be a string");
  return value_->get<std::string>();
}

std::string JsonNode::string(std::string_view key) const {
  return at(key).get_string();
}
std::string JsonNode::string(std::string_view key, const std::string& fallback) const {
  auto child = find(key);
  return child ? child->get_string() : fallback;
}

bool JsonNode::boolean(std::string_view key) const {
  JsonNode child = at(key);
  if (!child.value().is_boolean()) child.fail("should be true or false");
  return child.value().get<bool>();
}
bool JsonNode::boolean(std::string_view key, bool fallback) const {
  return find(key) ? boolean(key) : fallback;
}
std::optional<bool> JsonNode::optional_boolean(std::string_view key) const {
  if (!find(key)) return std::nullopt;
  return boolean(key);
}

int64_t JsonNode::integer(std::string_view key) const {
  JsonNode child = at(key);
  if (!child.value().is_number_integer()) child.fail("should be an integer");
  return child.value().get<int64_t>();
}
int64_t JsonNode::integer(std::string_view key, int64_t fallback) const {
  return find(key) ? integer(key) : fallback;
}

char32_t JsonNode::character(std::string_view key) const {
  JsonNode child = at(key);
  std::string s = child.get_string();
  size_t pos = 0;
  if (s.empty() || find_invalid_utf8(s) != std::string::npos) child.fail("should be one character");
  char32_t c = next_code_point(s, pos);
  if (pos != s.size()) child.fail("should be one character");
  return c;
}

void JsonNode::fail(std::string_view problem) const {
  std::string shown = value_->dump();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  INGOT_THROW(IoError, "[tokenizer] '{}': field '{}' {} (got {})", *origin_,
              path_.empty() ? "<root>" : path_, problem, shown);
}

void JsonNode::unsupported(std::string_view kind, std::string_view type,
                           std::string_view supported) const {
  INGOT_THROW(NotSupportedError,
              "[tokenizer] '{}': {} type '{}' (field '{}') is not supported by ingot; supported "
              "{} types: {}",
              *origin_, kind, type, path_, kind, supported);
}

}  // namespace ingot::text::tokenizer
