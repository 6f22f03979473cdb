// Python's arithmetic, comparison, membership and iteration over chat-template values.
#include <fmt/format.h>

#include <cmath>

#include "ingot/text/chat/builtins.h"
#include "ingot/text/chat/text.h"

namespace ingot::text::chat {

namespace {

[[noreturn]] void type_error(Interpreter& in, std::string_view op, const Value& a, const Value& b) {
  in.error(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(),
                       b.type_name()));
}

Value checked(Interpreter& in, bool overflow, int64_t result) {
  if (overflow) {
    in.unsupported("integer overflow: Python's big integers are not supported (64-bit only)");
  }
  return Value(result);
}

Value repeat(Interpreter& in, const Value& seq, int64_t times) {
  if (times < 0) times = 0;
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty()) in.charge(s.size() * static_cast<size_t>(std::min<int64_t>(times, INT32_MAX)));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += s;
    return Value(std::move(out));
  }
  const ListData& list = seq.as_list();
  if (!list.items.empty()) {
    in.charge(list.items.size() * sizeof(Value) *
              static_cast<size_t>(std::min<int64_t>(times, INT32_MAX)));
  }
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), list.items.begin(), list.items.end());
  return Value::list(std::move(out), list.tuple);
}

Value arithmetic(Interpreter& in, std::string_view op, const Value& a, const Value& b) {
  if (!a.is_float() && !b.is_float()) {
    int64_t x = a.integer(), y = b.integer(), r = 0;
    if (op == "+" || op == "-" || op == "*") {
      bool overflow = op == "+"   ? __builtin_add_overflow(x, y, &r)
                      : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                  : __builtin_mul_overflow(x, y, &r);
      return checked(in, overflow, r);
    }
    if (op == "/") {
      if (y == 0) in.error("division by zero");
      return Value(static_cast<double>(x) / static_cast<double>(y));
    }
    if (op == "//" || op == "%") {
      if (y == 0) in.error(op == "%" ? "integer modulo by zero" : "integer division by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == "%") return Value(int64_t{0});
        in.unsupported("integer overflow: Python's big integers are not supported (64-bit only)");
      }
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == "//" ? q : m);
    }
    // **
    if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
    int64_t result = 1, base = x;
    bool overflow = false;
    while (y > 0) {
      if (y & 1) overflow |= __builtin_mul_overflow(result, base, &result);
      y >>= 1;
      if (y > 0) overflow |= __builtin_mul_overflow(base, base, &base);
    }
    return checked(in, overflow, result);
  }
  double x = a.number(), y = b.number();
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "/") {
    if (y == 0) in.error("float division by zero");
    return Value(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0) in.error(op == "%" ? "float modulo by zero" : "float floor division by zero");
    // CPython's float_divmod.
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    if (op == "%") return Value(mod);
    double floordiv = 0;
    if (div != 0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
      floordiv = std::copysign(0.0, x / y);
    }
    return Value(floordiv);
  }
  if (x == 0 && y < 0) in.error("0.0 cannot be raised to a negative power");
  return Value(std::pow(x, y));
}

}  // namespace

Value binary_op(Interpreter& in, std::string_view op, const Value& a, const Value& b) {
  if (a.is_undefined()) in.undefined_error(a, fmt::format("operand of '{}'", op));
  if (b.is_undefined()) in.undefined_error(b, fmt::format("operand of '{}'", op));
  if (a.is_number() && b.is_number()) return arithmetic(in, op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      in.charge(a.as_string().size() + b.as_string().size());
      return Value(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && a.as_list().tuple == b.as_list().tuple) {
      std::vector<Value> items = a.as_list().items;
      items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
      in.charge(items.size() * sizeof(Value));
      return Value::list(std::move(items), a.as_list().tuple);
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool()))
      return repeat(in, a, b.integer());
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool()))
      return repeat(in, b, a.integer());
  }
  if (op == "%" && a.is_string()) {
    in.unsupported("printf-style string formatting ('...' % values); use ~ or filters instead");
  }
  type_error(in, op, a, b);
}

Value negate(Interpreter& in, const Value& a) {
  if (a.is_undefined()) in.undefined_error(a, "operand of unary '-'");
  if (a.is_float()) return Value(-a.as_float());
  if (!a.is_number()) in.error(fmt::format("bad operand type for unary -: '{}'", a.type_name()));
  int64_t r = 0;
  bool overflow = __builtin_sub_overflow(int64_t{0}, a.integer(), &r);
  return checked(in, overflow, r);
}

namespace {

// Python's <, for numbers, strings (code point order, which is UTF-8 byte order) and
// lists (lexicographic).
bool less(Interpreter& in, std::string_view op, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.number() < b.number();
    return a.integer() < b.integer();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list() && a.as_list().tuple == b.as_list().tuple) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!(x[i] == y[i])) return less(in, op, x[i], y[i]);
    }
    return x.size() < y.size();
  }
  if (a.is_undefined()) in.undefined_error(a, fmt::format("operand of '{}'", op));
  if (b.is_undefined()) in.undefined_error(b, fmt::format("operand of '{}'", op));
  in.error(fmt::format("'{}' not supported between instances of '{}' and '{}'", op, a.type_name(),
                       b.type_name()));
}

bool contains(Interpreter& in, const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::String:
      if (!item.is_string()) {
        in.error(
            fmt::format("'in <string>' requires string as left operand, not {}", item.type_name()));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const Value& v : container.as_list().items) {
        if (v == item) return true;
      }
      return false;
    case Value::Kind::Dict:
      return container.as_dict().find(item) != nullptr;
    case Value::Kind::Undefined:
      return false;
    default:
      in.error(fmt::format("argument of type '{}' is not iterable", container.type_name()));
  }
}

}  // namespace

bool compare_op(Interpreter& in, std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return a == b;
  if (op == "!=") return !(a == b);
  if (op == "<") return less(in, op, a, b);
  if (op == ">") return less(in, op, b, a);
  if (op == "<=") return a == b || less(in, op, a, b);
  if (op == ">=") return a == b || less(in, op, b, a);
  if (op == "in") return contains(in, b, a);
  return !contains(in, b, a);  // notin
}

std::vector<Value> iterate(Interpreter& in, const Value& v) {
  std::vector<Value> items;
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return items;
    case Value::Kind::List:
      return v.as_list().items;
    case Value::Kind::Dict:
      for (const auto& [k, val] : v.as_dict().items) items.push_back(k);
      return items;
    case Value::Kind::String: {
      const std::string& s = v.as_string();
      for (size_t pos = 0; pos < s.size();) {
        size_t start = pos;
        decode_utf8(s, pos);
        items.emplace_back(s.substr(start, pos - start));
      }
      in.charge(items.size() * sizeof(Value));
      return items;
    }
    default:
      in.error(fmt::format("'{}' object is not iterable", v.type_name()));
  }
}

}  // namespace ingot::text::chat
