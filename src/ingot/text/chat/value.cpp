// Value: construction, truth, equality and Python's str() / repr().
#include "ingot/text/chat/value.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ingot/core/error.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

const Value* DictData::find(const Value& key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

void DictData::set(Value key, Value value) {
  for (auto& [k, v] : items) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(std::move(key), std::move(value));
}

namespace {

void check_depth(int depth) {
  if (depth > kMaxValueNesting) {
    INGOT_THROW(ValueError, "[chat_template] a value nests deeper than {} levels",
                kMaxValueNesting);
  }
}

}  // namespace

Value Value::list(std::vector<Value> items, bool tuple) {
  ListData data{std::move(items), tuple};
  for (const Value& item : data.items) {
    data.depth = std::max(data.depth, item.depth() + 1);
    data.holds_namespace = data.holds_namespace || item.holds_namespace();
  }
  check_depth(data.depth);
  Value v;
  v.data_ = std::make_shared<const ListData>(std::move(data));
  return v;
}

Value Value::dict(DictData data) {
  data.depth = 1;
  data.holds_namespace = false;
  for (const auto& [k, item] : data.items) {
    data.depth = std::max({data.depth, k.depth() + 1, item.depth() + 1});
    data.holds_namespace = data.holds_namespace || k.holds_namespace() || item.holds_namespace();
  }
  check_depth(data.depth);
  Value v;
  v.data_ = std::make_shared<const DictData>(std::move(data));
  return v;
}

Value Value::dict(std::vector<std::pair<std::string, Value>> items) {
  DictData data;
  for (auto& [k, val] : items) data.set(Value(std::move(k)), std::move(val));
  return dict(std::move(data));
}

Value Value::namespace_(DictData attrs) {
  for (const auto& [k, item] : attrs.items) {
    if (item.holds_namespace()) {
      INGOT_THROW(ValueError, "[chat_template] a namespace() cannot hold another namespace");
    }
  }
  Value v;
  v.data_ = std::make_shared<NamespaceData>(NamespaceData{std::move(attrs)});
  return v;
}

Value Value::callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  Value v;
  v.data_ = std::make_shared<const CallableData>(CallableData{std::move(name), std::move(fn)});
  return v;
}

int Value::depth() const {
  switch (kind()) {
    case Kind::List:
      return as_list().depth;
    case Kind::Dict:
      return as_dict().depth;
    case Kind::Namespace: {
      int d = 1;
      for (const auto& [k, item] : as_namespace().attrs.items) d = std::max(d, item.depth() + 1);
      return d;
    }
    default:
      return 0;
  }
}

bool Value::holds_namespace() const {
  switch (kind()) {
    case Kind::List:
      return as_list().holds_namespace;
    case Kind::Dict:
      return as_dict().holds_namespace;
    case Kind::Namespace:
      return true;
    default:
      return false;
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return as_bool();
    case Kind::Int:
      return as_int() != 0;
    case Kind::Float:
      return as_float() != 0.0;
    case Kind::String:
      return !as_string().empty();
    case Kind::List:
      return !as_list().items.empty();
    case Kind::Dict:
      return !as_dict().items.empty();
    case Kind::Namespace:
    case Kind::Callable:
      return true;
  }
  return false;
}

bool Value::operator==(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (is_float() || other.is_float()) return number() == other.number();
    return integer() == other.integer();
  }
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return as_string() == other.as_string();
    case Kind::List: {
      const ListData& a = as_list();
      const ListData& b = other.as_list();
      if (&a == &b) return true;
      if (a.tuple != b.tuple || a.items.size() != b.items.size()) return false;
      for (size_t i = 0; i < a.items.size(); ++i) {
        if (!(a.items[i] == b.items[i])) return false;
      }
      return true;
    }
    case Kind::Dict: {
      const DictData& a = as_dict();
      const DictData& b = other.as_dict();
      if (&a == &b) return true;
      if (a.items.size() != b.items.size()) return false;
      for (const auto& [k, v] : a.items) {
        const Value* w = b.find(k);
        if (!w || !(v == *w)) return false;
      }
      return true;
    }
    case Kind::Namespace:
      return &as_namespace() == &other.as_namespace();
    case Kind::Callable:
      return &as_callable() == &other.as_callable();
    default:
      return false;
  }
}

bool Value::same_as(const Value& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::List:
      return &as_list() == &other.as_list();
    case Kind::Dict:
      return &as_dict() == &other.as_dict();
    default:
      return *this == other;
  }
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return as_list().tuple ? "tuple" : "list";
    case Kind::Dict:
      return "dict";
    case Kind::Namespace:
      return "Namespace";
    case Kind::Callable:
      return "function";
  }
  return "object";
}

std::string float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: positional for exponents in
  // [-4, 16), scientific otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." +
             digits.substr(static_cast<size_t>(exponent) + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

namespace {

void append_repr(std::string& out, const Value& value);

void append_string_repr(std::string& out, const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  size_t pos = 0;
  while (pos < s.size()) {
    char32_t c = decode_utf8(s, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (!is_printable(c)) {
      if (c < 0x100) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
      } else if (c < 0x10000) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      } else {
        out += fmt::format("\\U{:08x}", static_cast<unsigned>(c));
      }
    } else {
      append_utf8_char(out, c);
    }
  }
  out += quote;
}

void append_repr(std::string& out, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::String:
      append_string_repr(out, value.as_string());
      return;
    case Value::Kind::List: {
      const ListData& list = value.as_list();
      out += list.tuple ? '(' : '[';
      for (size_t i = 0; i < list.items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, list.items[i]);
      }
      if (list.tuple && list.items.size() == 1) out += ',';
      out += list.tuple ? ')' : ']';
      return;
    }
    case Value::Kind::Dict: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : value.as_dict().items) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, k);
        out += ": ";
        append_repr(out, v);
      }
      out += '}';
      return;
    }
    case Value::Kind::Namespace:
      out += "<Namespace ";
      append_repr(out, Value::dict(value.as_namespace().attrs));
      out += '>';
      return;
    default:
      out += to_str(value);
  }
}

}  // namespace

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined:
      return "";
    case Value::Kind::None:
      return "None";
    case Value::Kind::Bool:
      return value.as_bool() ? "True" : "False";
    case Value::Kind::Int:
      return std::to_string(value.as_int());
    case Value::Kind::Float:
      return float_repr(value.as_float());
    case Value::Kind::String:
      return value.as_string();
    case Value::Kind::Callable:
      return fmt::format("<function {}>", value.as_callable().name);
    default:
      return to_repr(value);
  }
}

std::string to_repr(const Value& value) {
  std::string out;
  if (value.is_undefined()) return "Undefined";
  append_repr(out, value);
  return out;
}

}  // namespace ingot::text::chat
