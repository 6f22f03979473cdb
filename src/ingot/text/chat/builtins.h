// What the interpreter calls by name: operators, attribute and item access, methods of
// str / dict / list, jinja2's filters and tests, and the template globals. Each follows
// the Python / jinja2 function it is named after; errors go through the Interpreter so
// they name the template line.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ingot/text/chat/interpreter.h"
#include "ingot/text/chat/value.h"

namespace ingot::text::chat {

// --- operators.cpp ---
// op: + - * / // % **
Value binary_op(Interpreter& in, std::string_view op, const Value& a, const Value& b);
// op: == != < > <= >= in notin
bool compare_op(Interpreter& in, std::string_view op, const Value& a, const Value& b);
Value negate(Interpreter& in, const Value& a);
// Elements of a for loop / list(): list items, dict keys, string characters;
// undefined is empty. Others are a ValueError.
std::vector<Value> iterate(Interpreter& in, const Value& v);

// --- access.cpp ---
// obj.name (jinja2's getattr: a method or attribute first, then the item).
Value get_attribute(Interpreter& in, const Value& obj, const std::string& name);
// obj[key] (jinja2's getitem: the item first, then an attribute); missing is undefined.
Value get_item(Interpreter& in, const Value& obj, const Value& key);
// obj[start:stop:step]; null pointers are omitted bounds.
Value get_slice(Interpreter& in, const Value& obj, const Value* start, const Value* stop,
                const Value* step);
// obj.name(args) for a str, dict or list method; nullopt when obj has no such method.
std::optional<Value> call_method(Interpreter& in, const Value& obj, const std::string& name,
                                 CallArgs& args);
// range, dict, namespace, raise_exception, strftime_now (undefined when none).
Value builtin_global(const std::string& name);

// --- filters.cpp / tests.cpp ---
enum class Known { Yes, Unsupported, Unknown };
Known known_filter(const std::string& name);  // Unsupported: a jinja2 filter not built here
Known known_test(const std::string& name);
Value apply_filter(Interpreter& in, const std::string& name, const Value& operand, CallArgs& args);
bool apply_test(Interpreter& in, const std::string& name, const Value& operand, CallArgs& args);

// --- json.cpp ---
struct JsonOptions {
  std::optional<std::string> indent;  // None: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};
// json.dumps(value, ...) as Python writes it.
std::string to_json(Interpreter& in, const Value& value, const JsonOptions& options);

// Argument helpers for builtins: the argument named `name` or at `index`, or nullptr.
const Value* argument(CallArgs& args, size_t index, std::string_view name);
// Rejects positional arguments beyond `max_positional` and unknown keyword names.
void check_arguments(Interpreter& in, const CallArgs& args, std::string_view function,
                     size_t max_positional, std::initializer_list<std::string_view> keywords);

}  // namespace ingot::text::chat
