// jinja2's builtin tests (`x is defined`, `x is sameas false`, ...), jinja2/tests.py
// semantics.
#include <fmt/format.h>

#include <algorithm>

#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

namespace {

const char* const kTests[] = {
    "boolean", "callable", "defined",  "divisibleby", "eq",       "equalto",     "escaped",
    "even",    "false",    "filter",   "float",       "ge",       "greaterthan", "gt",
    "in",      "integer",  "iterable", "le",          "lessthan", "lower",       "lt",
    "mapping", "ne",       "none",     "number",      "odd",      "sameas",      "sequence",
    "string",  "test",     "true",     "undefined",   "upper",    "==",          "!=",
    "<",       "<=",       ">",        ">="};

const Value& operand_arg(Interpreter& in, CallArgs& args, const std::string& test) {
  const Value* a = argument(args, 0, "other");
  if (!a) a = argument(args, 0, "value");
  if (!a) a = argument(args, 0, "seq");
  if (!a) a = argument(args, 0, "num");
  if (!a) in.error(fmt::format("the test '{}' needs an argument", test));
  return *a;
}

}  // namespace

Known known_test(const std::string& name) {
  bool found = std::find_if(std::begin(kTests), std::end(kTests),
                            [&](const char* t) { return name == t; }) != std::end(kTests);
  return found ? Known::Yes : Known::Unknown;
}

bool apply_test(Interpreter& in, const std::string& name, const Value& v, CallArgs& args) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  // Python's iter() and len()+[] accept jinja2's Undefined too.
  if (name == "iterable" || name == "sequence") {
    return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
  }
  if (name == "callable") return v.is_callable();
  if (name == "escaped") return false;  // no Markup values here
  if (name == "lower" || name == "upper") {
    std::string s = to_str(v);
    std::string lower = py_lower(s), upper = py_upper(s);
    return lower != upper && s == (name == "lower" ? lower : upper);
  }
  if (name == "filter" || name == "test") {
    if (!v.is_string()) return false;
    return name == "filter" ? known_filter(v.as_string()) == Known::Yes
                            : known_test(v.as_string()) == Known::Yes;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    Value divisor = name == "divisibleby" ? operand_arg(in, args, name) : Value(int64_t{2});
    Value rest = binary_op(in, "%", v, divisor);
    bool zero = rest == Value(int64_t{0});
    return name == "odd" ? !zero : zero;
  }
  if (name == "sameas") return v.same_as(operand_arg(in, args, name));
  if (name == "in") return compare_op(in, "in", v, operand_arg(in, args, name));
  static const std::pair<const char*, const char*> comparisons[] = {
      {"eq", "=="}, {"equalto", "=="},    {"==", "=="}, {"ne", "!="}, {"!=", "!="},
      {"lt", "<"},  {"lessthan", "<"},    {"<", "<"},   {"le", "<="}, {"<=", "<="},
      {"gt", ">"},  {"greaterthan", ">"}, {">", ">"},   {"ge", ">="}, {">=", ">="}};
  for (const auto& [test, op] : comparisons) {
    if (name == test) return compare_op(in, op, v, operand_arg(in, args, name));
  }
  in.error(fmt::format("no test named '{}'", name));
}

}  // namespace ingot::text::chat
