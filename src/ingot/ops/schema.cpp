#include "ingot/ops/schema.h"

#include <cctype>
#include <cstdlib>

namespace ingot {
namespace {

// Recursive-descent parser over the schema text; `pos_` only moves forward.
class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  Schema parse() {
    Schema s;
    std::string qualified = identifier("op name");
    if (auto dot = qualified.find('.'); dot != std::string::npos) {
      s.name = qualified.substr(0, dot);
      s.overload = qualified.substr(dot + 1);
    } else {
      s.name = qualified;
    }
    expect('(');
    bool kwarg_only = false;
    if (!accept(')')) {
      do {
        if (accept('*')) {
          kwarg_only = true;
          continue;
        }
        Argument a = argument(/*is_return=*/false);
        a.kwarg_only = kwarg_only;
        s.arguments.push_back(std::move(a));
      } while (accept(','));
      expect(')');
    }
    expect('-');
    expect('>');
    if (accept('(')) {
      if (!accept(')')) {
        do s.returns.push_back(argument(/*is_return=*/true));
        while (accept(','));
        expect(')');
      }
    } else {
      s.returns.push_back(argument(/*is_return=*/true));
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected trailing text");
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    INGOT_THROW(ValueError, "[parse_schema] {} at position {} of '{}'", what, pos_, text_);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string identifier(const char* what) {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.' || text_[pos_] == ':')) {
      ++pos_;
    }
    if (start == pos_) fail(fmt::format("expected {}", what));
    return std::string(text_.substr(start, pos_ - start));
  }

  ArgType type() {
    ArgType t;
    std::string base = identifier("a type");
    if (base == "Tensor") t.base = BaseType::Tensor;
    else if (base == "int") t.base = BaseType::Int;
    else if (base == "SymInt") t.base = BaseType::SymInt;
    else if (base == "float") t.base = BaseType::Float;
    else if (base == "bool") t.base = BaseType::Bool;
    else if (base == "Scalar") t.base = BaseType::Scalar;
    else if (base == "ScalarType") t.base = BaseType::ScalarType;
    else if (base == "str") t.base = BaseType::Str;
    else fail(fmt::format("unknown type '{}'", base));
    return t;
  }

  std::optional<AliasInfo> alias() {
    if (!accept('(')) return std::nullopt;
    AliasInfo info;
    info.set = identifier("an alias set");
    if (accept('!')) info.is_write = true;
    if (accept('-')) {  // "(a -> *)": list elements alias; treated as aliasing a
      expect('>');
      expect('*');
    }
    expect(')');
    return info;
  }

  Argument argument(bool is_return) {
    Argument a;
    a.type = type();
    a.alias = alias();
    if (accept('?')) {
      if (accept('[')) {
        a.type.elements_optional = true;
        list_suffix(a.type);
      } else {
        a.type.optional = true;
      }
    } else if (accept('[')) {
      list_suffix(a.type);
    }
    if (accept('?')) a.type.optional = true;
    skip_space();
    bool has_name = pos_ < text_.size() &&
                    (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_');
    if (has_name) a.name = identifier("an argument name");
    else if (!is_return) fail("expected an argument name");
    if (!is_return && accept('=')) a.default_value = default_value(a.type);
    return a;
  }

  // After '[': an optional fixed size and ']'.
  void list_suffix(ArgType& t) {
    t.is_list = true;
    skip_space();
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      t.fixed_size = int(number().to_int());
    }
    expect(']');
  }

  Scalar number() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
            text_[pos_] == '+' || text_[pos_] == '.' || text_[pos_] == 'e')) {
      ++pos_;
    }
    std::string s(text_.substr(start, pos_ - start));
    if (s.empty()) fail("expected a number");
    if (s.find_first_of(".e") != std::string::npos) return Scalar(std::strtod(s.c_str(), nullptr));
    return Scalar(int64_t(std::strtoll(s.c_str(), nullptr, 10)));
  }

  Value default_value(const ArgType& t) {
    skip_space();
    if (text_.substr(pos_, 4) == "None") {
      pos_ += 4;
      return Value();
    }
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return scalar_as(t, Scalar(true));
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return scalar_as(t, Scalar(false));
    }
    if (accept('\'') || accept('"')) {
      char quote = text_[pos_ - 1];
      size_t end = text_.find(quote, pos_);
      if (end == std::string_view::npos) fail("unterminated string");
      std::string s(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return Value(s);
    }
    if (t.is_list) {
      SymIntList items;
      if (accept('[')) {
        if (!accept(']')) {
          do items.push_back(number().to_int());
          while (accept(','));
          expect(']');
        }
      } else {
        items.assign(std::max(t.fixed_size, 1), number().to_int());
      }
      return Value(items);
    }
    return scalar_as(t, number());
  }

  // A literal default converted to the argument's kind.
  Value scalar_as(const ArgType& t, Scalar s) {
    switch (t.base) {
      case BaseType::Int:
      case BaseType::SymInt: return Value(s.to_int());
      case BaseType::Float: return Value(s.to_double());
      case BaseType::Bool: return Value(s.to_bool());
      case BaseType::Scalar: return Value(s);
      default: fail("a number cannot be the default of this type");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

const char* base_name(BaseType b) {
  switch (b) {
    case BaseType::Tensor: return "Tensor";
    case BaseType::Int: return "int";
    case BaseType::SymInt: return "SymInt";
    case BaseType::Float: return "float";
    case BaseType::Bool: return "bool";
    case BaseType::Scalar: return "Scalar";
    case BaseType::ScalarType: return "ScalarType";
    case BaseType::Str: return "str";
  }
  return "?";
}

std::string argument_str(const Argument& a) {
  std::string out = base_name(a.type.base);
  if (a.alias) out += fmt::format("({}{})", a.alias->set, a.alias->is_write ? "!" : "");
  if (a.type.elements_optional) out += "?";
  if (a.type.is_list) {
    out += a.type.fixed_size >= 0 ? fmt::format("[{}]", a.type.fixed_size) : "[]";
  }
  if (a.type.optional) out += "?";
  if (!a.name.empty()) out += " " + a.name;
  if (a.default_value) out += fmt::format("={}", a.default_value->str());
  return out;
}

}  // namespace

std::string ArgType::str() const {
  Argument a;
  a.type = *this;
  return argument_str(a);
}

Schema parse_schema(std::string_view text) { return SchemaParser(text).parse(); }

std::string Schema::qualified_name() const {
  return overload.empty() ? name : name + "." + overload;
}

std::string Schema::str() const {
  std::string out = qualified_name() + "(";
  bool star_written = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i) out += ", ";
    if (arguments[i].kwarg_only && !star_written) {
      out += "*, ";
      star_written = true;
    }
    out += argument_str(arguments[i]);
  }
  out += ") -> ";
  if (returns.size() == 1) return out + argument_str(returns[0]);
  out += "(";
  for (size_t i = 0; i < returns.size(); ++i) out += (i ? ", " : "") + argument_str(returns[i]);
  return out + ")";
}

int Schema::argument_index(std::string_view n) const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name == n) return int(i);
  }
  return -1;
}

bool Schema::is_view() const {
  for (const auto& r : returns) {
    if (r.alias && !r.alias->is_write) return true;
  }
  return false;
}

std::vector<int> Schema::mutated_arguments() const {
  std::vector<int> out;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].alias && arguments[i].alias->is_write) out.push_back(int(i));
  }
  return out;
}

std::vector<int> Schema::returns_aliasing_mutated_args() const {
  std::vector<int> out;
  for (const auto& r : returns) {
    int found = -1;
    if (r.alias && r.alias->is_write) {
      for (size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i].alias && arguments[i].alias->set == r.alias->set) found = int(i);
      }
    }
    out.push_back(found);
  }
  return out;
}

}  // namespace ingot
