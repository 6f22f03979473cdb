// Attribute, item and slice access, str / dict / list methods, and the globals
// (range, dict, namespace, raise_exception, strftime_now).
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/errors.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

const Value* argument(CallArgs& args, size_t index, std::string_view name) {
  if (index < args.positional.size()) return &args.positional[index];
  for (auto& [k, v] : args.keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

void check_arguments(Interpreter& in, const CallArgs& args, std::string_view function,
                     size_t max_positional, std::initializer_list<std::string_view> keywords) {
  if (args.positional.size() > max_positional) {
    in.error(fmt::format("{}() takes at most {} positional argument(s), {} given", function,
                         max_positional, args.positional.size()));
  }
  for (const auto& [k, v] : args.keyword) {
    if (std::find(keywords.begin(), keywords.end(), k) == keywords.end()) {
      in.error(fmt::format("{}() got an unexpected keyword argument '{}'", function, k));
    }
  }
}

namespace {

bool is_str_method(const std::string& name) {
  static const char* const names[] = {
      "capitalize", "casefold",    "center",     "count",      "encode",       "endswith",
      "expandtabs", "find",        "format",     "format_map", "index",        "isalnum",
      "isalpha",    "isascii",     "isdecimal",  "isdigit",    "isidentifier", "islower",
      "isnumeric",  "isprintable", "isspace",    "istitle",    "isupper",      "join",
      "ljust",      "lower",       "lstrip",     "partition",  "removeprefix", "removesuffix",
      "replace",    "rfind",       "rindex",     "rjust",      "rpartition",   "rsplit",
      "rstrip",     "split",       "splitlines", "startswith", "strip",        "swapcase",
      "title",      "translate",   "upper",      "zfill"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool is_dict_method(const std::string& name) {
  static const char* const names[] = {"clear", "copy",    "fromkeys",   "get",    "items", "keys",
                                      "pop",   "popitem", "setdefault", "update", "values"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool is_list_method(const std::string& name) {
  static const char* const names[] = {"append", "clear", "copy",   "count",   "extend", "index",
                                      "insert", "pop",   "remove", "reverse", "sort"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

bool has_method(const Value& obj, const std::string& name) {
  return (obj.is_string() && is_str_method(name)) || (obj.is_dict() && is_dict_method(name)) ||
         (obj.is_list() && is_list_method(name));
}

Value bound_method(const Value& obj, const std::string& name) {
  return Value::callable(
      obj.type_name() + "." + name,
      [obj, name](Interpreter& in, CallArgs& args) { return *call_method(in, obj, name, args); });
}

std::optional<std::string> optional_string(Interpreter& in, const Value* v, std::string_view what) {
  if (v == nullptr || v->is_none()) return std::nullopt;
  if (!v->is_string())
    in.error(fmt::format("{} must be a string or None, not {}", what, v->type_name()));
  return v->as_string();
}

int64_t optional_int(Interpreter& in, const Value* v, int64_t fallback, std::string_view what) {
  if (v == nullptr) return fallback;
  if (!v->is_int() && !v->is_bool())
    in.error(fmt::format("{} must be an integer, not {}", what, v->type_name()));
  return v->integer();
}

const std::string& string_arg(Interpreter& in, CallArgs& args, size_t i, std::string_view name,
                              std::string_view method) {
  const Value* v = argument(args, i, name);
  if (v == nullptr || !v->is_string()) {
    in.error(fmt::format("{}() needs a string argument '{}'", method, name));
  }
  return v->as_string();
}

Value list_of(Interpreter& in, const std::vector<std::string>& parts) {
  std::vector<Value> items;
  for (const auto& p : parts) items.emplace_back(p);
  in.charge(items.size() * sizeof(Value));
  return Value::list(std::move(items));
}

bool all_chars(const std::string& s, bool (*pred)(char32_t)) {
  if (s.empty()) return false;
  for (size_t pos = 0; pos < s.size();) {
    if (!pred(decode_utf8(s, pos))) return false;
  }
  return true;
}

Value string_method(Interpreter& in, const std::string& s, const std::string& name,
                    CallArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    check_arguments(in, args, "str." + name, 1, {"chars"});
    auto chars = optional_string(in, argument(args, 0, "chars"), "str." + name + "() argument");
    return Value(py_strip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    check_arguments(in, args, "str." + name, 2, {"sep", "maxsplit"});
    auto sep = optional_string(in, argument(args, 0, "sep"), "separator");
    if (sep && sep->empty()) in.error("empty separator");
    int64_t maxsplit = optional_int(in, argument(args, 1, "maxsplit"), -1, "maxsplit");
    return list_of(in, name == "split" ? py_split(s, sep, maxsplit) : py_rsplit(s, sep, maxsplit));
  }
  if (name == "startswith" || name == "endswith") {
    check_arguments(in, args, "str." + name, 1, {});
    const Value* p = argument(args, 0, "");
    std::vector<Value> options;
    if (p && p->is_list() && p->as_list().tuple)
      options = p->as_list().items;
    else if (p)
      options.push_back(*p);
    if (options.empty() && !p) in.error(fmt::format("str.{}() needs an argument", name));
    for (const Value& o : options) {
      if (!o.is_string())
        in.error(fmt::format("str.{}() argument must be str or a tuple of str", name));
      const std::string& x = o.as_string();
      bool hit = x.size() <= s.size() &&
                 (name == "startswith" ? s.compare(0, x.size(), x) == 0
                                       : s.compare(s.size() - x.size(), x.size(), x) == 0);
      if (hit) return Value(true);
    }
    return Value(false);
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize") {
    check_arguments(in, args, "str." + name, 0, {});
    return Value(name == "upper"   ? py_upper(s)
                 : name == "lower" ? py_lower(s)
                 : name == "title" ? py_title(s)
                                   : py_capitalize(s));
  }
  if (name == "replace") {
    check_arguments(in, args, "str.replace", 3, {});
    const std::string& old = string_arg(in, args, 0, "old", "str.replace");
    const std::string& with = string_arg(in, args, 1, "new", "str.replace");
    int64_t count = optional_int(in, argument(args, 2, "count"), -1, "count");
    std::string out = py_replace(s, old, with, count);
    in.charge(out.size());
    return Value(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "count") {
    check_arguments(in, args, "str." + name, 1, {});
    const std::string& sub = string_arg(in, args, 0, "sub", "str." + name);
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(code_point_count(s) + 1));
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value(n);
    }
    size_t p = name == "find" ? s.find(sub) : s.rfind(sub);
    if (p == std::string::npos) return Value(int64_t{-1});
    return Value(static_cast<int64_t>(code_point_count(std::string_view(s).substr(0, p))));
  }
  if (name == "join") {
    check_arguments(in, args, "str.join", 1, {});
    const Value* seq = argument(args, 0, "iterable");
    if (!seq) in.error("str.join() needs an argument");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(in, *seq)) {
      if (!v.is_string())
        in.error(fmt::format("str.join() expects strings, found {}", v.type_name()));
      if (!first) out += s;
      first = false;
      out += v.as_string();
    }
    in.charge(out.size());
    return Value(std::move(out));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    check_arguments(in, args, "str." + name, 1, {});
    const std::string& x = string_arg(in, args, 0, "affix", "str." + name);
    if (name == "removeprefix" && s.compare(0, x.size(), x) == 0) return Value(s.substr(x.size()));
    if (name == "removesuffix" && x.size() <= s.size() && !x.empty() &&
        s.compare(s.size() - x.size(), x.size(), x) == 0) {
      return Value(s.substr(0, s.size() - x.size()));
    }
    return Value(s);
  }
  if (name == "isdigit")
    return Value(all_chars(s, [](char32_t c) { return c >= '0' && c <= '9'; }));
  if (name == "isspace") return Value(all_chars(s, is_py_space));
  // isalpha / isalnum: ASCII letters only (Python counts every Unicode letter).
  if (name == "isalpha") {
    return Value(
        all_chars(s, [](char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }));
  }
  if (name == "isalnum") {
    return Value(all_chars(s, [](char32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }));
  }
  if (name == "islower" || name == "isupper") {
    std::string lower = py_lower(s), upper = py_upper(s);
    bool cased = lower != upper;
    return Value(cased && (name == "islower" ? s == lower : s == upper));
  }
  in.unsupported(fmt::format("the string method '{}()'", name));
}

[[noreturn]] void immutable(Interpreter& in, const Value& obj, const std::string& name) {
  in.error(
      fmt::format("'{}.{}()' modifies its object, which transformers' immutable sandbox "
                  "forbids (use a namespace() or build a new value)",
                  obj.type_name(), name));
}

}  // namespace

std::optional<Value> call_method(Interpreter& in, const Value& obj, const std::string& name,
                                 CallArgs& args) {
  if (!has_method(obj, name)) return std::nullopt;
  if (obj.is_string()) return string_method(in, obj.as_string(), name, args);
  if (obj.is_dict()) {
    const DictData& d = obj.as_dict();
    if (name == "get") {
      check_arguments(in, args, "dict.get", 2, {});
      const Value* key = argument(args, 0, "key");
      if (!key) in.error("dict.get() needs a key");
      const Value* fallback = argument(args, 1, "default");
      const Value* found = d.find(*key);
      return found ? *found : fallback ? *fallback : Value(None{});
    }
    if (name == "items" || name == "keys" || name == "values") {
      check_arguments(in, args, "dict." + name, 0, {});
      std::vector<Value> items;
      for (const auto& [k, v] : d.items) {
        items.push_back(name == "keys"     ? k
                        : name == "values" ? v
                                           : Value::list({k, v}, /*tuple=*/true));
      }
      in.charge(items.size() * sizeof(Value));
      return Value::list(std::move(items));
    }
    if (name == "copy") return obj;
    if (name == "fromkeys") in.unsupported("dict.fromkeys()");
    immutable(in, obj, name);
  }
  const ListData& list = obj.as_list();
  if (name == "count" || name == "index") {
    check_arguments(in, args, "list." + name, 1, {});
    const Value* x = argument(args, 0, "value");
    if (!x) in.error(fmt::format("list.{}() needs an argument", name));
    int64_t n = 0;
    for (size_t i = 0; i < list.items.size(); ++i) {
      if (list.items[i] == *x) {
        if (name == "index") return Value(static_cast<int64_t>(i));
        ++n;
      }
    }
    if (name == "index") in.error(fmt::format("{} is not in list", to_repr(*x)));
    return Value(n);
  }
  if (name == "copy") return obj;
  immutable(in, obj, name);
}

Value get_attribute(Interpreter& in, const Value& obj, const std::string& name) {
  if (obj.is_undefined()) in.undefined_error(obj, fmt::format("reading its attribute '{}'", name));
  if (has_method(obj, name)) return bound_method(obj, name);
  const Value* found = nullptr;
  if (obj.is_dict()) found = obj.as_dict().find(std::string_view(name));
  if (obj.is_namespace()) found = obj.as_namespace().attrs.find(std::string_view(name));
  if (found) return *found;
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", obj.type_name(), name));
}

Value get_item(Interpreter& in, const Value& obj, const Value& key) {
  if (obj.is_undefined()) in.undefined_error(obj, "subscripted");
  if (obj.is_dict()) {
    if (const Value* found = obj.as_dict().find(key)) return *found;
  } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.integer();
    if (obj.is_list()) {
      const auto n = static_cast<int64_t>(obj.as_list().items.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return obj.as_list().items[static_cast<size_t>(i)];
    } else {
      std::vector<size_t> offsets = code_point_offsets(obj.as_string());
      const auto n = static_cast<int64_t>(offsets.size() - 1);
      if (i < 0) i += n;
      if (i >= 0 && i < n) {
        size_t a = offsets[static_cast<size_t>(i)], b = offsets[static_cast<size_t>(i) + 1];
        return Value(obj.as_string().substr(a, b - a));
      }
    }
    return Value::undefined(fmt::format("'{} object' has no element {}", obj.type_name(), i));
  } else if (obj.is_namespace() && key.is_string()) {
    if (const Value* found = obj.as_namespace().attrs.find(key)) return *found;
  }
  if (key.is_string() && has_method(obj, key.as_string()))
    return bound_method(obj, key.as_string());
  return Value::undefined(
      fmt::format("'{} object' has no element {}", obj.type_name(), to_repr(key)));
}

Value get_slice(Interpreter& in, const Value& obj, const Value* start, const Value* stop,
                const Value* step) {
  if (obj.is_undefined()) in.undefined_error(obj, "sliced");
  if (!obj.is_list() && !obj.is_string()) {
    return Value::undefined(fmt::format("'{} object' cannot be sliced", obj.type_name()));
  }
  auto bound = [&](const Value* v, bool& given) -> int64_t {
    given = v && !v->is_none();
    if (!given) return 0;
    if (!v->is_int() && !v->is_bool()) in.error("slice indices must be integers or None");
    return v->integer();
  };
  bool has_start, has_stop, has_step;
  int64_t a = bound(start, has_start), b = bound(stop, has_stop), s = bound(step, has_step);
  if (!has_step) s = 1;
  if (s == 0) in.error("slice step cannot be zero");
  std::vector<size_t> offsets;
  int64_t n;
  if (obj.is_string()) {
    offsets = code_point_offsets(obj.as_string());
    n = static_cast<int64_t>(offsets.size() - 1);
  } else {
    n = static_cast<int64_t>(obj.as_list().items.size());
  }
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](int64_t& x, bool given, int64_t fallback) {
    if (!given) {
      x = fallback;
      return;
    }
    if (x < 0) {
      x = x < -n ? (s < 0 ? -1 : 0) : x + n;
    } else if (x >= n) {
      x = s < 0 ? n - 1 : n;
    }
  };
  adjust(a, has_start, s < 0 ? n - 1 : 0);
  adjust(b, has_stop, s < 0 ? -1 : n);
  std::vector<int64_t> picks;
  for (int64_t i = a; s > 0 ? i < b : i > b; i += s) {
    picks.push_back(i);
    if ((s > 0 && i > INT64_MAX - s) || (s < 0 && i < INT64_MIN - s)) break;
  }
  if (obj.is_string()) {
    std::string out;
    const std::string& str = obj.as_string();
    for (int64_t i : picks) {
      auto u = static_cast<size_t>(i);
      out += str.substr(offsets[u], offsets[u + 1] - offsets[u]);
    }
    in.charge(out.size());
    return Value(std::move(out));
  }
  std::vector<Value> items;
  for (int64_t i : picks) items.push_back(obj.as_list().items[static_cast<size_t>(i)]);
  in.charge(items.size() * sizeof(Value));
  return Value::list(std::move(items), obj.as_list().tuple);
}

namespace {

Value make_dict(Interpreter& in, CallArgs& args, std::string_view function) {
  DictData d;
  if (args.positional.size() > 1)
    in.error(fmt::format("{}() takes at most 1 positional argument", function));
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      d = src.as_dict();
    } else {
      for (const Value& pair : iterate(in, src)) {
        std::vector<Value> kv = iterate(in, pair);
        if (kv.size() != 2) in.error(fmt::format("{}() needs (key, value) pairs", function));
        d.set(kv[0], kv[1]);
      }
    }
  }
  for (auto& [k, v] : args.keyword) d.set(Value(k), v);
  in.charge(d.items.size() * 2 * sizeof(Value));
  return Value::dict(std::move(d));
}

Value range_of(Interpreter& in, CallArgs& args) {
  check_arguments(in, args, "range", 3, {});
  std::vector<int64_t> n;
  for (const Value& v : args.positional) {
    if (!v.is_int() && !v.is_bool())
      in.error(fmt::format("range() needs integers, not {}", v.type_name()));
    n.push_back(v.integer());
  }
  if (n.empty()) in.error("range() needs at least 1 argument");
  int64_t start = n.size() == 1 ? 0 : n[0], stop = n.size() == 1 ? n[0] : n[1];
  int64_t step = n.size() == 3 ? n[2] : 1;
  if (step == 0) in.error("range() arg 3 must not be zero");
  // jinja2's sandbox caps ranges at 100000 items (MAX_RANGE).
  long double count = step > 0 ? (static_cast<long double>(stop) - start) / step
                               : (static_cast<long double>(start) - stop) / -step;
  if (count > 100000) in.error("range() is too big: jinja2's sandbox allows at most 100000 items");
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    items.emplace_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  in.charge(items.size() * sizeof(Value));
  return Value::list(std::move(items));
}

Value raise_exception(Interpreter& in, CallArgs& args) {
  std::string message = args.positional.empty() ? "" : to_str(args.positional[0]);
  throw TemplateRaised(located(in.origin(), in.line(), "the template raised an error: " + message),
                       message);
}

Value strftime_now(Interpreter& in, CallArgs& args) {
  check_arguments(in, args, "strftime_now", 1, {});
  if (args.positional.empty() || !args.positional[0].is_string()) {
    in.error("strftime_now() needs a format string");
  }
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  const std::string& format = args.positional[0].as_string();
  if (format.empty()) return Value("");
  std::string buf(format.size() * 8 + 64, '\0');
  size_t n = std::strftime(buf.data(), buf.size(), format.c_str(), &local);
  if (n == 0) in.error("strftime_now(): the formatted date is empty or too long");
  buf.resize(n);
  return Value(std::move(buf));
}

Value unsupported_global(std::string name) {
  return Value::callable(name, [name](Interpreter& in, CallArgs&) -> Value {
    in.unsupported(fmt::format("the global function '{}()'", name));
  });
}

}  // namespace

Value builtin_global(const std::string& name) {
  static const std::vector<std::pair<std::string, Value>> globals = {
      {"range", Value::callable("range", range_of)},
      {"dict", Value::callable(
                   "dict", [](Interpreter& in, CallArgs& a) { return make_dict(in, a, "dict"); })},
      {"namespace", Value::callable("namespace",
                                    [](Interpreter& in, CallArgs& a) {
                                      return Value::namespace_(
                                          make_dict(in, a, "namespace").as_dict());
                                    })},
      {"raise_exception", Value::callable("raise_exception", raise_exception)},
      {"strftime_now", Value::callable("strftime_now", strftime_now)},
      {"cycler", unsupported_global("cycler")},
      {"joiner", unsupported_global("joiner")},
      {"lipsum", unsupported_global("lipsum")},
  };
  for (const auto& [k, v] : globals) {
    if (k == name) return v;
  }
  return Value();
}

}  // namespace ingot::text::chat
