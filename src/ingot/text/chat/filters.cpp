// jinja2's builtin filters that chat templates use (jinja2/filters.py semantics), and
// transformers' tojson override.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

namespace {

const char* const kImplemented[] = {
    "abs",     "attr",    "capitalize", "count",  "d",      "default",    "dictsort", "e",
    "escape",  "first",   "float",      "indent", "int",    "items",      "join",     "last",
    "length",  "list",    "lower",      "map",    "max",    "min",        "reject",   "rejectattr",
    "replace", "reverse", "round",      "safe",   "select", "selectattr", "sort",     "string",
    "sum",     "title",   "tojson",     "trim",   "unique", "upper"};
const char* const kJinjaOnly[] = {"batch",  "center",    "filesizeformat", "forceescape",
                                  "format", "groupby",   "pprint",         "random",
                                  "slice",  "striptags", "truncate",       "urlencode",
                                  "urlize", "wordcount", "wordwrap",       "xmlattr"};

bool in_list(const std::string& name, const char* const* begin, const char* const* end) {
  return std::find_if(begin, end, [&](const char* n) { return name == n; }) != end;
}

int64_t length_of(Interpreter& in, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return 0;
    case Value::Kind::String:
      return static_cast<int64_t>(code_point_count(v.as_string()));
    case Value::Kind::List:
      return static_cast<int64_t>(v.as_list().items.size());
    case Value::Kind::Dict:
      return static_cast<int64_t>(v.as_dict().items.size());
    default:
      in.error(fmt::format("object of type '{}' has no len()", v.type_name()));
  }
}

// item.a.b: each dotted part looked up as jinja2's getitem does (digits as indices).
Value attribute_path(Interpreter& in, const Value& item, const std::string& path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    v = digits && part.size() < 18 ? get_item(in, v, Value(static_cast<int64_t>(std::stoll(part))))
                                   : get_item(in, v, Value(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

const std::string* attribute_arg(Interpreter& in, CallArgs& args, size_t index) {
  const Value* a = argument(args, index, "attribute");
  if (a == nullptr || a->is_none()) return nullptr;
  if (!a->is_string()) in.error("the 'attribute' argument must be a string");
  return &a->as_string();
}

// Python's int() of a string: optional sign, digits with single underscores between
// them, surrounding whitespace.
std::optional<int64_t> parse_int(const std::string& raw, int base) {
  std::string s = py_strip(raw, std::nullopt, true, true);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return std::nullopt;
  // int('0x1A', 16) accepts the prefix of its base.
  if (i + 1 < s.size() && s[i] == '0') {
    char p = static_cast<char>(s[i + 1] | 0x20);
    if ((base == 16 && p == 'x') || (base == 8 && p == 'o') || (base == 2 && p == 'b')) i += 2;
  }
  int64_t value = 0;
  bool last_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_' && last_digit && i + 1 < s.size() && s[i + 1] != '_') {
      last_digit = false;
      continue;
    }
    int d = c >= '0' && c <= '9'                     ? c - '0'
            : (c | 0x20) >= 'a' && (c | 0x20) <= 'z' ? (c | 0x20) - 'a' + 10
                                                     : 99;
    if (d >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) || __builtin_add_overflow(value, d, &value)) {
      return std::nullopt;
    }
    last_digit = true;
  }
  if (!last_digit) return std::nullopt;
  return negative ? -value : value;
}

std::optional<double> parse_float(const std::string& raw) {
  std::string s = py_strip(raw, std::nullopt, true, true);
  if (s.empty() || s.find('_') != std::string::npos) return std::nullopt;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  std::string lower = py_lower(s);
  if (lower.find('x') != std::string::npos) return std::nullopt;  // strtod's hex floats
  return d;
}

Value to_int(Interpreter& in, const Value& v, const Value& fallback, int base) {
  if (v.is_bool() || v.is_int()) return Value(v.integer());
  if (v.is_float()) {
    double d = v.as_float();
    if (!std::isfinite(d)) in.error("cannot convert an infinite or NaN float to an integer");
    if (std::fabs(d) >= 9.2e18)
      in.unsupported("integer overflow: only 64-bit integers are supported");
    return Value(static_cast<int64_t>(d));
  }
  if (v.is_string()) {
    if (auto i = parse_int(v.as_string(), base)) return Value(*i);
    if (base == 10) {
      if (auto d = parse_float(v.as_string()); d && std::isfinite(*d) && std::fabs(*d) < 9.2e18) {
        return Value(static_cast<int64_t>(*d));
      }
    }
  }
  return fallback;
}

// Python's round(x, ndigits) for floats: correctly rounded through the decimal text.
double round_float(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  if (digits == 0) return std::nearbyint(x);
  if (digits > 300 || digits < -300) return digits > 0 ? x : 0.0 * x;
  if (digits < 0) {
    double p = std::pow(10.0, static_cast<double>(-digits));
    return std::nearbyint(x / p) * p;
  }
  std::string text = fmt::format("{:.{}f}", x, digits);
  return std::strtod(text.c_str(), nullptr);
}

std::vector<std::string> split_lines(const std::string& s) {
  // str.splitlines(): \n \r \r\n \v \f \x1c \x1d \x1e \x85 \u2028 \u2029 end lines.
  std::vector<std::string> lines;
  std::string cur;
  for (size_t pos = 0; pos < s.size();) {
    size_t start = pos;
    char32_t c = decode_utf8(s, pos);
    bool breaks = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D ||
                  c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
    if (!breaks) {
      cur.append(s, start, pos - start);
      continue;
    }
    if (c == '\r' && pos < s.size() && s[pos] == '\n') ++pos;
    lines.push_back(std::move(cur));
    cur.clear();
  }
  if (!cur.empty()) lines.push_back(std::move(cur));
  return lines;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Sort key for sort / unique / dictsort / min / max: strings lowered unless
// case-sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value(py_lower(v.as_string())) : v;
}

bool less_than(Interpreter& in, const Value& a, const Value& b) {
  return compare_op(in, "<", a, b);
}

Value select_items(Interpreter& in, const Value& seq, CallArgs& args, bool by_attribute,
                   bool keep) {
  std::vector<Value> out;
  size_t next = 0;
  std::string attr;
  if (by_attribute) {
    if (args.positional.empty() || !args.positional[0].is_string()) {
      in.error(fmt::format("{}() needs an attribute name", keep ? "selectattr" : "rejectattr"));
    }
    attr = args.positional[0].as_string();
    next = 1;
  }
  std::string test;
  if (args.positional.size() > next) {
    if (!args.positional[next].is_string()) in.error("the test name must be a string");
    test = args.positional[next].as_string();
    ++next;
  }
  CallArgs test_args;
  test_args.positional.assign(
      args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, args.positional.size())),
      args.positional.end());
  test_args.keyword = args.keyword;
  for (const Value& item : iterate(in, seq)) {
    Value v = by_attribute ? attribute_path(in, item, attr) : item;
    bool pass = test.empty() ? v.truthy() : apply_test(in, test, v, test_args);
    if (pass == keep) out.push_back(item);
  }
  in.charge(out.size() * sizeof(Value));
  return Value::list(std::move(out));
}

Value map_items(Interpreter& in, const Value& seq, CallArgs& args) {
  std::vector<Value> out;
  if (args.positional.empty()) {
    const std::string* attr = attribute_arg(in, args, 99);
    if (!attr) in.error("map() needs a filter name or attribute=");
    const Value* fallback = argument(args, 99, "default");
    for (const Value& item : iterate(in, seq)) {
      Value v = attribute_path(in, item, *attr);
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
  } else {
    if (!args.positional[0].is_string()) in.error("map() needs a filter name");
    std::string name = args.positional[0].as_string();
    if (known_filter(name) != Known::Yes)
      in.error(fmt::format("map(): no filter named '{}'", name));
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    for (const Value& item : iterate(in, seq)) {
      CallArgs copy = rest;
      out.push_back(apply_filter(in, name, item, copy));
    }
  }
  in.charge(out.size() * sizeof(Value));
  return Value::list(std::move(out));
}

Value tojson(Interpreter& in, const Value& v, CallArgs& args) {
  // transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
  check_arguments(in, args, "tojson", 4, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions options;
  if (const Value* a = argument(args, 0, "ensure_ascii")) options.ensure_ascii = a->truthy();
  if (const Value* ind = argument(args, 1, "indent"); ind && !ind->is_none()) {
    if (ind->is_string()) {
      options.indent = ind->as_string();
    } else if (ind->is_int() || ind->is_bool()) {
      options.indent =
          std::string(static_cast<size_t>(std::clamp<int64_t>(ind->integer(), 0, 1024)), ' ');
    } else {
      in.error(
          fmt::format("tojson(): indent must be an integer or a string, not {}", ind->type_name()));
    }
    options.item_separator = ",";
  }
  if (const Value* sep = argument(args, 2, "separators"); sep && !sep->is_none()) {
    std::vector<Value> parts = iterate(in, *sep);
    if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string()) {
      in.error("tojson(): separators must be an (item_separator, key_separator) pair of strings");
    }
    options.item_separator = parts[0].as_string();
    options.key_separator = parts[1].as_string();
  }
  if (const Value* a = argument(args, 3, "sort_keys")) options.sort_keys = a->truthy();
  std::string text = to_json(in, v, options);
  in.charge(text.size());
  return Value(std::move(text));
}

}  // namespace

Known known_filter(const std::string& name) {
  if (in_list(name, std::begin(kImplemented), std::end(kImplemented))) return Known::Yes;
  if (in_list(name, std::begin(kJinjaOnly), std::end(kJinjaOnly))) return Known::Unsupported;
  return Known::Unknown;
}

Value apply_filter(Interpreter& in, const std::string& name, const Value& v, CallArgs& args) {
  auto str_arg = [&](size_t i, std::string_view key) -> std::optional<std::string> {
    const Value* a = argument(args, i, key);
    if (!a || a->is_none()) return std::nullopt;
    return to_str(*a);
  };
  if (name == "trim") return Value(py_strip(to_str(v), str_arg(0, "chars"), true, true));
  if (name == "tojson") return tojson(in, v, args);
  if (name == "length" || name == "count") return Value(length_of(in, v));
  if (name == "upper") return Value(py_upper(to_str(v)));
  if (name == "lower") return Value(py_lower(to_str(v)));
  if (name == "capitalize") return Value(py_capitalize(to_str(v)));
  if (name == "title") return Value(jinja_title(to_str(v)));
  if (name == "string") return Value(to_str(v));
  if (name == "safe") return v;
  if (name == "e" || name == "escape") return Value(html_escape(to_str(v)));
  if (name == "default" || name == "d") {
    const Value* fallback = argument(args, 0, "default_value");
    const Value* boolean = argument(args, 1, "boolean");
    bool use = v.is_undefined() || (boolean && boolean->truthy() && !v.truthy());
    return use ? (fallback ? *fallback : Value("")) : v;
  }
  if (name == "first" || name == "last") {
    std::vector<Value> items = iterate(in, v);
    if (items.empty()) return Value::undefined(fmt::format("no {} item, sequence was empty", name));
    return name == "first" ? items.front() : items.back();
  }
  if (name == "join") {
    std::string sep = str_arg(0, "d").value_or("");
    const std::string* attr = attribute_arg(in, args, 1);
    std::string out;
    bool first = true;
    for (const Value& item : iterate(in, v)) {
      if (!first) out += sep;
      first = false;
      out += to_str(attr ? attribute_path(in, item, *attr) : item);
    }
    in.charge(out.size());
    return Value(std::move(out));
  }
  if (name == "replace") {
    auto old = str_arg(0, "old"), with = str_arg(1, "new");
    if (!old || !with) in.error("replace() needs the old and new strings");
    const Value* count = argument(args, 2, "count");
    if (count && !count->is_none() && !count->is_int() && !count->is_bool()) {
      in.error(fmt::format("replace(): count must be an integer, not {}", count->type_name()));
    }
    std::string out =
        py_replace(to_str(v), *old, *with, count && !count->is_none() ? count->integer() : -1);
    in.charge(out.size());
    return Value(std::move(out));
  }
  if (name == "int") {
    const Value* fallback = argument(args, 0, "default");
    const Value* base = argument(args, 1, "base");
    int b =
        base && base->is_int() ? static_cast<int>(std::clamp<int64_t>(base->as_int(), 2, 36)) : 10;
    return to_int(in, v, fallback ? *fallback : Value(int64_t{0}), b);
  }
  if (name == "float") {
    const Value* fallback = argument(args, 0, "default");
    if (v.is_number()) return Value(v.number());
    if (v.is_string()) {
      if (auto d = parse_float(v.as_string())) return Value(*d);
    }
    return fallback ? *fallback : Value(0.0);
  }
  if (name == "list") {
    std::vector<Value> items = iterate(in, v);
    in.charge(items.size() * sizeof(Value));
    return Value::list(std::move(items));
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::list({});
    if (!v.is_dict())
      in.error(
          fmt::format("items(): can only get item pairs from a mapping, not {}", v.type_name()));
    CallArgs none;
    return *call_method(in, v, "items", none);
  }
  if (name == "dictsort") {
    if (!v.is_dict()) in.error("dictsort(): needs a mapping");
    const Value* cs = argument(args, 0, "case_sensitive");
    const Value* by = argument(args, 1, "by");
    const Value* rev = argument(args, 2, "reverse");
    bool by_value = by && by->is_string() && by->as_string() == "value";
    std::vector<std::pair<Value, Value>> items = v.as_dict().items;
    bool reverse = rev && rev->truthy();
    auto key = [&](const std::pair<Value, Value>& kv) {
      return sort_key(by_value ? kv.second : kv.first, cs && cs->truthy());
    };
    std::stable_sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
      return reverse ? less_than(in, key(b), key(a)) : less_than(in, key(a), key(b));
    });
    std::vector<Value> out;
    for (auto& [k, val] : items) out.push_back(Value::list({k, val}, true));
    return Value::list(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr")
    return select_items(in, v, args, true, name == "selectattr");
  if (name == "select" || name == "reject")
    return select_items(in, v, args, false, name == "select");
  if (name == "map") return map_items(in, v, args);
  if (name == "attr") {
    auto attr = str_arg(0, "name");
    if (!attr) in.error("attr() needs an attribute name");
    // Python getattr only: methods and namespace attributes, never dict items.
    if (v.is_dict()) {
      Value got = get_attribute(in, v, *attr);
      return got.is_callable()
                 ? got
                 : Value::undefined(fmt::format("'dict object' has no attribute '{}'", *attr));
    }
    return get_attribute(in, v, *attr);
  }
  if (name == "reverse") {
    if (v.is_string()) {
      Value step(int64_t{-1});
      return get_slice(in, v, nullptr, nullptr, &step);
    }
    std::vector<Value> items = iterate(in, v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "sort" || name == "unique" || name == "min" || name == "max") {
    bool sorting = name == "sort";
    const Value* rev = sorting ? argument(args, 0, "reverse") : nullptr;
    const Value* cs = argument(args, sorting ? 1 : 0, "case_sensitive");
    const std::string* attr = attribute_arg(in, args, sorting ? 2 : 1);
    bool case_sensitive = cs && cs->truthy();
    std::vector<Value> items = iterate(in, v);
    auto key = [&](const Value& item) {
      return sort_key(attr ? attribute_path(in, item, *attr) : item, case_sensitive);
    };
    if (name == "unique") {
      std::vector<Value> out, seen;
      for (const Value& item : items) {
        Value k = key(item);
        if (std::find(seen.begin(), seen.end(), k) != seen.end()) continue;
        seen.push_back(k);
        out.push_back(item);
      }
      return Value::list(std::move(out));
    }
    if (!sorting) {
      if (items.empty())
        return Value::undefined(fmt::format("no {} item, sequence was empty", name));
      auto pick =
          name == "min"
              ? std::min_element(
                    items.begin(), items.end(),
                    [&](const Value& a, const Value& b) { return less_than(in, key(a), key(b)); })
              : std::max_element(items.begin(), items.end(), [&](const Value& a, const Value& b) {
                  return less_than(in, key(a), key(b));
                });
      return *pick;
    }
    // Python's sorted(reverse=True) keeps equal items in their original order.
    bool reverse = rev && rev->truthy();
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
      return reverse ? less_than(in, key(b), key(a)) : less_than(in, key(a), key(b));
    });
    return Value::list(std::move(items));
  }
  if (name == "sum") {
    const std::string* attr = attribute_arg(in, args, 0);
    const Value* start = argument(args, 1, "start");
    Value total = start ? *start : Value(int64_t{0});
    for (const Value& item : iterate(in, v)) {
      total = binary_op(in, "+", total, attr ? attribute_path(in, item, *attr) : item);
    }
    return total;
  }
  if (name == "abs") {
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (!v.is_number()) in.error(fmt::format("bad operand type for abs(): '{}'", v.type_name()));
    return v.integer() < 0 ? negate(in, v) : Value(v.integer());
  }
  if (name == "round") {
    const Value* p = argument(args, 0, "precision");
    const Value* m = argument(args, 1, "method");
    int64_t digits = p && (p->is_int() || p->is_bool()) ? p->integer() : 0;
    std::string method = m && m->is_string() ? m->as_string() : "common";
    if (!v.is_number()) in.error(fmt::format("round() needs a number, not {}", v.type_name()));
    if (method == "common") {
      if (!v.is_float()) return Value(v.integer());
      return Value(round_float(v.as_float(), digits));
    }
    if (method != "floor" && method != "ceil")
      in.error("round(): method must be 'common', 'ceil' or 'floor'");
    double scale = std::pow(10.0, static_cast<double>(digits));
    double x = v.number() * scale;
    return Value((method == "floor" ? std::floor(x) : std::ceil(x)) / scale);
  }
  if (name == "indent") {
    const Value* w = argument(args, 0, "width");
    const Value* first = argument(args, 1, "first");
    const Value* blank = argument(args, 2, "blank");
    if (w && !w->is_string() && !w->is_int() && !w->is_bool()) {
      in.error(
          fmt::format("indent(): width must be an integer or a string, not {}", w->type_name()));
    }
    std::string indention =
        w && w->is_string()
            ? w->as_string()
            : std::string(static_cast<size_t>(std::clamp<int64_t>(w ? w->integer() : 4, 0, 1024)),
                          ' ');
    std::vector<std::string> lines = split_lines(to_str(v) + "\n");
    std::string out;
    if (blank && blank->truthy()) {
      for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" + indention : "") + lines[i];
    } else {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i == 0) {
          out += lines[0];
        } else {
          out += "\n" + (lines[i].empty() ? "" : indention) + lines[i];
        }
      }
    }
    if (first && first->truthy()) out = indention + out;
    in.charge(out.size());
    return Value(std::move(out));
  }
  if (known_filter(name) == Known::Unsupported)
    in.unsupported(fmt::format("the filter '{}'", name));
  in.error(fmt::format("no filter named '{}'", name));
}

}  // namespace ingot::text::chat
