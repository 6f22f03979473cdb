#include "ingot/formats/pt2/treespec.h"

#include <nlohmann/json.hpp>

#include "ingot/core/error.h"

namespace ingot::pt2 {
namespace {

using Json = nlohmann::json;
constexpr int kMaxDepth = 128;

class Converter {
 public:
  Converter(const std::vector<TreeSpec>& leaves,
            const std::map<std::string, std::vector<std::string>>& namedtuples,
            const std::string& where)
      : leaves_(leaves), namedtuples_(namedtuples), where_(where) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw IoError(fmt::format("[pt2] {}: {}", where_, what));
  }

  TreeSpec node(const Json& j, int depth) {
    if (depth > kMaxDepth)
      fail(fmt::format("the pytree spec nests deeper than {} levels", kMaxDepth));
    if (!j.is_object() || !j.contains("type") || !j.contains("children_spec") ||
        !j["children_spec"].is_array())
      fail("a pytree spec node needs 'type' and 'children_spec'");
    const Json& type = j["type"];
    if (type.is_null()) {
      if (next_ >= leaves_.size())
        fail(fmt::format("the pytree spec has more leaves than the {} in the signature",
                         leaves_.size()));
      return leaves_[next_++];
    }
    if (!type.is_string()) fail("a pytree spec 'type' must be a string or null");
    const std::string& t = type.get_ref<const std::string&>();
    TreeSpec s;
    for (const Json& c : j["children_spec"]) s.children.push_back(node(c, depth + 1));
    const Json context = parse_context(j);
    if (t == "builtins.tuple") {
      s.type = "tuple";
    } else if (t == "builtins.list" || t == "torch.fx.immutable_collections.immutable_list") {
      s.type = "list";
    } else if (t == "builtins.dict" || t == "collections.OrderedDict" ||
               t == "torch.fx.immutable_collections.immutable_dict" ||
               t == "collections.defaultdict") {
      s.type = "dict";
      const Json& keys =
          t == "collections.defaultdict" && context.is_object() && context.contains("dict_context")
              ? context["dict_context"]
              : context;
      s.keys = key_list(keys, s.children.size());
    } else if (t == "collections.namedtuple") {
      if (!context.is_string()) fail("a namedtuple spec needs its type name as context");
      const std::string name = context.get<std::string>();
      auto it = namedtuples_.find(name);
      if (it == namedtuples_.end())
        fail(fmt::format("namedtuple '{}' has no field names in the program", name));
      s.type = name;
      s.keys = it->second;
      if (s.keys.size() != s.children.size())
        fail(fmt::format("namedtuple '{}' field count differs from its children", name));
    } else {
      // A registered type (a ModelOutput): its context lists the field names.
      s.type = t;
      if (context.is_array()) s.keys = key_list(context, s.children.size());
    }
    return s;
  }

  Json parse_context(const Json& j) const {
    if (!j.contains("context") || j["context"].is_null()) return Json();
    if (!j["context"].is_string()) fail("a pytree spec 'context' must be a JSON string");
    try {
      return parse_limited(j["context"].get<std::string>());
    } catch (const Json::exception& e) {
      fail(fmt::format("a pytree spec context is not valid JSON: {}", e.what()));
    }
  }

  std::vector<std::string> key_list(const Json& keys, size_t n) const {
    if (!keys.is_array() || keys.size() != n)
      fail(fmt::format("a dict spec needs one key per child ({})", n));
    std::vector<std::string> out;
    for (const Json& k : keys) out.push_back(k.is_string() ? k.get<std::string>() : k.dump());
    return out;
  }

  static Json parse_limited(const std::string& text) {
    Json::parser_callback_t limit = [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxDepth) throw IoError("[pt2] a pytree spec nests too deeply");
      return true;
    };
    return Json::parse(text, limit);
  }

  size_t used() const { return next_; }

 private:
  const std::vector<TreeSpec>& leaves_;
  const std::map<std::string, std::vector<std::string>>& namedtuples_;
  const std::string& where_;
  size_t next_ = 0;
};

}  // namespace

TreeSpec treespec_from_torch(const std::string& text, const std::vector<TreeSpec>& leaves,
                             const std::map<std::string, std::vector<std::string>>& namedtuples,
                             const std::string& where) {
  Converter c(leaves, namedtuples, where);
  Json j;
  try {
    j = Converter::parse_limited(text);
  } catch (const Json::exception& e) {
    c.fail(fmt::format("the pytree spec is not valid JSON: {}", e.what()));
  }
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_integer())
    c.fail("a pytree spec is [version, spec]");
  if (j[0].get<int64_t>() != 1)
    c.fail(fmt::format("pytree spec version {} is not supported (supported: 1)", j[0].dump()));
  TreeSpec s = c.node(j[1], 0);
  if (c.used() != leaves.size())
    c.fail(fmt::format("the pytree spec has {} leaves, the signature {}", c.used(), leaves.size()));
  return s;
}

}  // namespace ingot::pt2
