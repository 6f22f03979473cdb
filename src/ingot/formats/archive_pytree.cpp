// Pytree specs and their static leaf values in the archive.
#include "ingot/formats/archive_codec.h"

namespace ingot::archive {

Json static_value_to_json(const StaticValue& v) {
  struct Enc {
    Json operator()(std::monostate) const { return nullptr; }
    Json operator()(int64_t i) const { return Json{{"int", i}}; }
    Json operator()(double d) const { return Json{{"float", double_to_json(d)}}; }
    Json operator()(bool b) const { return Json{{"bool", b}}; }
    Json operator()(const std::string& s) const { return Json{{"string", s}}; }
  };
  return std::visit(Enc{}, v);
}

StaticValue static_value_from_json(const JsonView& v) {
  if (v.is_null()) return std::monostate{};
  if (!v.is_object() || v.json().size() != 1) {
    v.fail(
        "expected a static value: null or an object with one of the keys int, float, bool, string");
  }
  if (auto i = v.find("int")) return i->as_int();
  if (auto f = v.find("float")) return f->as_double();
  if (auto b = v.find("bool")) return b->as_bool();
  if (auto s = v.find("string")) return s->as_string();
  v.fail(
      "expected a static value: null or an object with one of the keys int, float, bool, string");
}

Json tree_spec_to_json(const TreeSpec& s) {
  Json j{{"type", s.type}};
  if (s.type == "static") j["value"] = static_value_to_json(s.value);
  if (!s.keys.empty()) j["keys"] = s.keys;
  if (!s.children.empty()) {
    Json children = Json::array();
    for (const TreeSpec& c : s.children) children.push_back(tree_spec_to_json(c));
    j["children"] = std::move(children);
  }
  return j;
}

TreeSpec tree_spec_from_json(const JsonView& v, int depth) {
  if (depth > kMaxTreeDepth) v.fail("tree spec nested deeper than {} levels", kMaxTreeDepth);
  TreeSpec s;
  s.type = v.get("type").as_string();
  if (s.type.empty()) v.get("type").fail("a tree spec type cannot be empty");
  if (s.type == "static") s.value = static_value_from_json(v.get("value"));
  if (auto keys = v.find("keys")) {
    for (const JsonView& k : keys->elements()) s.keys.push_back(k.as_string());
  }
  if (auto children = v.find("children")) {
    for (const JsonView& c : children->elements())
      s.children.push_back(tree_spec_from_json(c, depth + 1));
  }
  if (s.is_leaf() && !s.children.empty()) v.fail("a '{}' leaf cannot have children", s.type);
  if (s.type == "optional" && s.children.size() != 1) {
    v.fail("an optional has exactly one child, got {}", s.children.size());
  }
  // Dicts and user types name every child; tuples and lists name none.
  if (!s.keys.empty() && s.keys.size() != s.children.size()) {
    v.fail("{} keys for {} children", s.keys.size(), s.children.size());
  }
  if ((s.type == "dict") && s.keys.size() != s.children.size()) {
    v.fail("a dict needs one key per child");
  }
  return s;
}

}  // namespace ingot::archive
