// JSON for chat templates: Python's json.dumps (the tojson filter transformers installs)
// and reading JSON text into values.
#include "ingot/text/chat/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

namespace {

void append_json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (size_t pos = 0; pos < s.size();) {
    size_t start = pos;
    char32_t c = decode_utf8(s, pos);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else if (ensure_ascii && c >= 0x7F) {
      if (c >= 0x10000) {
        char32_t v = c - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      }
    } else {
      out.append(s, start, pos - start);
    }
  }
  out += '"';
}

std::string float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return float_repr(d);
}

class JsonWriter {
 public:
  JsonWriter(Interpreter& in, const JsonOptions& options) : in_(in), options_(options) {}

  void write(std::string& out, const Value& v, int level) {
    if (level > kMaxNesting) in_.error("tojson(): the value nests too deeply");
    switch (v.kind()) {
      case Value::Kind::None:
        out += "null";
        return;
      case Value::Kind::Bool:
        out += v.as_bool() ? "true" : "false";
        return;
      case Value::Kind::Int:
        out += std::to_string(v.as_int());
        return;
      case Value::Kind::Float:
        out += float_json(v.as_float());
        return;
      case Value::Kind::String:
        append_json_string(out, v.as_string(), options_.ensure_ascii);
        return;
      case Value::Kind::List: {
        const auto& items = v.as_list().items;
        if (items.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += options_.item_separator;
          newline(out, level + 1);
          write(out, items[i], level + 1);
        }
        newline(out, level);
        out += ']';
        return;
      }
      case Value::Kind::Dict:
        write_dict(out, v.as_dict(), level);
        return;
      default:
        if (v.is_undefined()) in_.undefined_error(v, "passed to tojson");
        in_.error(
            fmt::format("tojson(): object of type {} is not JSON serializable", v.type_name()));
    }
  }

 private:
  void newline(std::string& out, int level) {
    if (!options_.indent) return;
    out += '\n';
    in_.charge(options_.indent->size() * static_cast<size_t>(level) + 1);
    for (int i = 0; i < level; ++i) out += *options_.indent;
  }

  std::string key_text(const Value& k) {
    switch (k.kind()) {
      case Value::Kind::String:
        return k.as_string();
      case Value::Kind::Int:
        return std::to_string(k.as_int());
      case Value::Kind::Float:
        return float_json(k.as_float());
      case Value::Kind::Bool:
        return k.as_bool() ? "true" : "false";
      case Value::Kind::None:
        return "null";
      default:
        in_.error(fmt::format("tojson(): keys must be str, int, float, bool or None, not {}",
                              k.type_name()));
    }
  }

  void write_dict(std::string& out, const DictData& d, int level) {
    if (d.items.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> items;
    for (const auto& kv : d.items) items.push_back(&kv);
    if (options_.sort_keys) {
      std::stable_sort(items.begin(), items.end(), [&](const auto* a, const auto* b) {
        return compare_op(in_, "<", a->first, b->first);
      });
    }
    out += '{';
    bool first = true;
    for (const auto* kv : items) {
      if (!first) out += options_.item_separator;
      first = false;
      newline(out, level + 1);
      append_json_string(out, key_text(kv->first), options_.ensure_ascii);
      out += options_.key_separator;
      write(out, kv->second, level + 1);
    }
    newline(out, level);
    out += '}';
  }

  Interpreter& in_;
  const JsonOptions& options_;
};

Value from_json(const nlohmann::ordered_json& j, int level, const std::string& origin) {
  if (level > kMaxNesting) {
    throw IoError(
        fmt::format("[chat_template] '{}': JSON nests deeper than {} levels", origin, kMaxNesting));
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value(None{});
    case nlohmann::ordered_json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<int64_t>(u));
      return Value(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& e : j) items.push_back(from_json(e, level + 1, origin));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      DictData d;
      for (const auto& [k, e] : j.items()) d.set(Value(k), from_json(e, level + 1, origin));
      return Value::dict(std::move(d));
    }
    default:
      throw IoError(fmt::format("[chat_template] '{}': unsupported JSON value (binary)", origin));
  }
}

}  // namespace

std::string to_json(Interpreter& in, const Value& value, const JsonOptions& options) {
  std::string out;
  JsonWriter(in, options).write(out, value, 0);
  return out;
}

Value value_from_json(std::string_view text, const std::string& origin) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw IoError(fmt::format("[chat_template] '{}' is not valid JSON: {}", origin, e.what()));
  }
  return from_json(j, 0, origin);
}

}  // namespace ingot::text::chat
