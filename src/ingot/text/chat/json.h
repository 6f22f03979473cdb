// JSON text as chat-template values: what `--messages file.json` and tokenizer_config.json
// hold. Objects keep their key order (as Python's json.loads does), so tojson writes
// them back in the same order.
#pragma once

#include <string>
#include <string_view>

#include "ingot/text/chat/value.h"

namespace ingot::text::chat {

// Parses JSON text into a Value (objects -> dict, arrays -> list, null -> none,
// integers beyond int64 -> float). IoError naming `origin` when the text is not JSON.
Value value_from_json(std::string_view text, const std::string& origin);

}  // namespace ingot::text::chat
