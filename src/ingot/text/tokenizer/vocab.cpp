#include "ingot/text/tokenizer/vocab.h"

#include "ingot/core/error.h"
#include "ingot/text/tokenizer/json_node.h"

namespace ingot::text::tokenizer {

Vocab Vocab::from_json(const JsonNode& node) {
  if (!node.value().is_object()) node.fail("should be an object of token -> id");
  Vocab v;
  v.ids_.reserve(node.value().size());
  for (const auto& [token, id] : node.value().items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0) {
      JsonNode(id, fmt::format("{}[\"{}\"]", node.path(), token), node.origin())
          .fail("should be a non-negative integer id");
    }
    int64_t value = id.get<int64_t>();
    v.ids_.emplace(token, value);
    v.tokens_.emplace(value, token);
  }
  return v;
}

}  // namespace ingot::text::tokenizer
