#include "ingot/ir/pytree.h"

#include <fmt/format.h>

namespace ingot {

std::string static_value_str(const StaticValue& v) {
  struct Printer {
    std::string operator()(std::monostate) const { return "None"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return fmt::format("{}", d); }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(const std::string& s) const { return fmt::format("'{}'", s); }
  };
  return std::visit(Printer{}, v);
}

size_t TreeSpec::num_leaves() const {
  if (is_leaf()) return 1;
  size_t n = 0;
  for (const TreeSpec& c : children) n += c.num_leaves();
  return n;
}

std::vector<std::string> TreeSpec::leaf_paths(const std::string& root,
                                              const std::vector<std::string>& top_names) const {
  if (is_leaf()) return {root};
  std::vector<std::string> paths;
  for (size_t i = 0; i < children.size(); ++i) {
    std::string child;
    if (type == "optional")
      child = root;
    else if (root.empty() && i < top_names.size())
      child = top_names[i];
    else if (!keys.empty())
      child = root.empty() ? keys[i] : root + "." + keys[i];
    else
      child = fmt::format("{}[{}]", root, i);
    auto sub = children[i].leaf_paths(child);
    paths.insert(paths.end(), sub.begin(), sub.end());
  }
  return paths;
}

std::string TreeSpec::str() const {
  if (type == "tensor") return "tensor";
  if (type == "static") return fmt::format("static({})", static_value_str(value));
  std::string s = type + "(";
  for (size_t i = 0; i < children.size(); ++i) {
    if (i) s += ", ";
    if (i < keys.size()) s += keys[i] + "=";
    s += children[i].str();
  }
  return s + ")";
}

void check_spec(const TreeSpec& spec, const char* type, const char* what) {
  INGOT_CHECK(spec.type == type, ValueError, "[pytree] expected {} ({}), the spec has {}", what,
              type, spec.str());
}

const Leaf& Unflattener::next(const char* what) {
  INGOT_CHECK(pos_ < leaves_.size(), ValueError, "[pytree] ran out of leaves reading a {}", what);
  return leaves_[pos_++];
}

namespace detail {
std::vector<std::string> split_field_names(const char* names) {
  std::vector<std::string> out;
  std::string cur;
  for (const char* p = names; *p; ++p) {
    if (*p == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(*p))) {
      cur += *p;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}
}  // namespace detail

}  // namespace ingot
