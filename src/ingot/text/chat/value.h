// The values a chat template computes with: Python's objects as jinja2 sees them.
//
// A Value is undefined, none, a bool, an int (int64; Python's big ints are an error on
// overflow), a float, a string (UTF-8), a list or tuple, a dict (insertion-ordered, any
// value as key), a namespace (jinja2's namespace(): the one mutable object) or a
// callable (a builtin function, a bound method or a macro).
//
// Lists and dicts are immutable once built (transformers renders in jinja2's
// ImmutableSandboxedEnvironment) and shared between copies; a namespace is shared by
// reference, as in Python. Undefined carries a hint ("'x' is undefined") for the error
// raised when it is used where jinja2's default Undefined raises.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ingot::text::chat {

class Value;
class Interpreter;

struct Undefined {
  std::string hint;  // what was looked up, for errors: "'x' is undefined"
};
struct None {};

// Containers record how deeply they nest and whether a namespace is inside them. Values
// nest at most kMaxValueNesting levels, and a namespace never holds another namespace:
// so no value is cyclic or too deep to compare, print or destroy by recursion.
inline constexpr int kMaxValueNesting = 200;

struct ListData {
  std::vector<Value> items;
  bool tuple = false;  // printed as (a, b) instead of [a, b]
  int depth = 1;       // set by Value::list
  bool holds_namespace = false;
};

struct DictData {
  std::vector<std::pair<Value, Value>> items;  // insertion order, unique keys
  int depth = 1;                               // set by Value::dict
  bool holds_namespace = false;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  const Value* find(const char* key) const { return find(std::string_view(key)); }
  // Inserts or replaces (keeping the first insertion's position, as Python does).
  void set(Value key, Value value);
};

struct NamespaceData {
  DictData attrs;
};

// Positional and keyword arguments of a call, evaluated.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct CallableData {
  std::string name;  // for errors and printing
  std::function<Value(Interpreter&, CallArgs&)> call;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

  Value() : data_(Undefined{}) {}
  Value(None) : data_(None{}) {}
  Value(Undefined u) : data_(std::move(u)) {}
  Value(bool b) : data_(b) {}
  Value(int v) : data_(int64_t{v}) {}
  Value(int64_t v) : data_(v) {}
  Value(double v) : data_(v) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(const char* s) : data_(std::string(s)) {}

  static Value undefined(std::string hint) { return Value(Undefined{std::move(hint)}); }
  static Value list(std::vector<Value> items, bool tuple = false);
  static Value dict(DictData data);
  static Value dict(std::vector<std::pair<std::string, Value>> items);
  static Value namespace_(DictData attrs);
  static Value callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_bool() || is_int() || is_float(); }  // Python's Number
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_namespace() const { return kind() == Kind::Namespace; }
  bool is_callable() const { return kind() == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  // Int or bool as int64 (Python's bool is an int).
  int64_t integer() const { return is_bool() ? int64_t{as_bool()} : as_int(); }
  // Any number as a double.
  double number() const { return is_float() ? as_float() : static_cast<double>(integer()); }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  const ListData& as_list() const { return *std::get<std::shared_ptr<const ListData>>(data_); }
  const DictData& as_dict() const { return *std::get<std::shared_ptr<const DictData>>(data_); }
  NamespaceData& as_namespace() const { return *std::get<std::shared_ptr<NamespaceData>>(data_); }
  const CallableData& as_callable() const {
    return *std::get<std::shared_ptr<const CallableData>>(data_);
  }
  const std::string& undefined_hint() const { return std::get<Undefined>(data_).hint; }

  // Python's truth value (undefined is false).
  bool truthy() const;
  // Python's ==, with int/float/bool comparing numerically.
  bool operator==(const Value& other) const;
  // Python's `is` for none/bool/containers; value equality for strings and numbers.
  bool same_as(const Value& other) const;

  // Python's type name ("str", "int", "dict", ...), for errors.
  std::string type_name() const;

  // Nesting levels (0 for scalars) and whether a namespace is this value or inside it.
  int depth() const;
  bool holds_namespace() const;

 private:
  std::variant<Undefined, None, bool, int64_t, double, std::string, std::shared_ptr<const ListData>,
               std::shared_ptr<const DictData>, std::shared_ptr<NamespaceData>,
               std::shared_ptr<const CallableData>>
      data_;
};

// str(value): what {{ value }} prints. Undefined prints as empty, none as "None",
// containers as Python's repr.
std::string to_str(const Value& value);
// repr(value): strings quoted as Python quotes them.
std::string to_repr(const Value& value);
// Python's repr of a float ("1.0", "1e+20", "inf", "nan").
std::string float_repr(double value);

}  // namespace ingot::text::chat
