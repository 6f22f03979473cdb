// Dim and the dynamic_shapes tree: construction, JSON, and matching against the input
// tree (export_flat asks which Dim each tensor-leaf dim has).
#include "ingot/export/dynamic_shapes_match.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ingot {

Dim::Dim(std::string name, int64_t min, int64_t max) : name_(std::move(name)), min_(min), max_(max) {
  INGOT_CHECK(!name_.empty(), ValueError, "[Dim] a named Dim needs a non-empty name");
  INGOT_CHECK(0 <= min && min <= max, ValueError,
              "[Dim] '{}' has an empty range [{}, {}]; min must be >= 0 and <= max", name_, min, max);
}

std::string Dim::str() const {
  if (mode_ == Mode::Auto) return "Dim.AUTO";
  if (mode_ == Mode::Static) return "Dim.STATIC";
  if (max_ == std::numeric_limits<int64_t>::max()) return fmt::format("Dim(\"{}\", min={})", name_, min_);
  return fmt::format("Dim(\"{}\", min={}, max={})", name_, min_, max_);
}

DynamicShapes DynamicShapes::tensor(std::map<int, Dim> dims) {
  DynamicShapes d;
  d.kind_ = Kind::Tensor;
  d.dims_ = std::move(dims);
  return d;
}
DynamicShapes DynamicShapes::tuple(std::vector<DynamicShapes> elements) {
  DynamicShapes d;
  d.kind_ = Kind::Tuple;
  d.elements_ = std::move(elements);
  return d;
}
DynamicShapes DynamicShapes::dict(std::map<std::string, DynamicShapes> fields) {
  DynamicShapes d;
  d.kind_ = Kind::Dict;
  d.fields_ = std::move(fields);
  return d;
}

std::string DynamicShapes::str() const {
  switch (kind_) {
    case Kind::Static: return "None";
    case Kind::Tensor: {
      std::string s = "{";
      for (const auto& [d, dim] : dims_) s += fmt::format("{}{}: {}", s.size() > 1 ? ", " : "", d, dim.str());
      return s + "}";
    }
    case Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < elements_.size(); ++i) s += (i ? ", " : "") + elements_[i].str();
      return s + ")";
    }
    case Kind::Dict: {
      std::string s = "{";
      for (const auto& [k, v] : fields_) s += fmt::format("{}\"{}\": {}", s.size() > 1 ? ", " : "", k, v.str());
      return s + "}";
    }
  }
  return "";
}

namespace {

Dim dim_from_json(const nlohmann::json& j, const std::string& where) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "auto" || s == "AUTO") return Dim::auto_();
    if (s == "static" || s == "STATIC") return Dim::static_();
    return Dim(s);
  }
  INGOT_CHECK(j.is_object() && j.contains("name"), ValueError,
              "[dynamic_shapes] {}: a dim is a name, \"auto\", \"static\" or "
              "{{\"name\": ..., \"min\": ..., \"max\": ...}}, got {}",
              where, j.dump());
  return Dim(j.at("name").get<std::string>(), j.value("min", int64_t(0)),
             j.value("max", std::numeric_limits<int64_t>::max()));
}

DynamicShapes from_json_value(const nlohmann::json& j, const std::string& where) {
  if (j.is_null()) return {};
  if (j.is_array()) {
    std::vector<DynamicShapes> elements;
    for (size_t i = 0; i < j.size(); ++i) elements.push_back(from_json_value(j[i], fmt::format("{}[{}]", where, i)));
    return DynamicShapes::tuple(std::move(elements));
  }
  INGOT_CHECK(j.is_object(), ValueError, "[dynamic_shapes] {}: expected an object, list or null, got {}",
              where, j.dump());
  // An object whose keys are all dim indices describes one tensor.
  bool all_digits = !j.empty();
  for (const auto& [k, v] : j.items()) {
    all_digits = all_digits && !k.empty() && std::all_of(k.begin(), k.end(), ::isdigit);
  }
  if (all_digits) {
    std::map<int, Dim> dims;
    for (const auto& [k, v] : j.items()) dims.emplace(std::stoi(k), dim_from_json(v, where + "." + k));
    return DynamicShapes::tensor(std::move(dims));
  }
  std::map<std::string, DynamicShapes> fields;
  for (const auto& [k, v] : j.items()) fields.emplace(k, from_json_value(v, where + "." + k));
  return DynamicShapes::dict(std::move(fields));
}

}  // namespace

DynamicShapes DynamicShapes::from_json(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    INGOT_THROW(ValueError, "[dynamic_shapes] {} is not valid JSON: {}", origin, e.what());
  }
  return from_json_value(j, origin);
}

// --- matching ------------------------------------------------------------------------

void ShapeSpecMatcher::match(const TreeSpec& spec, const DynamicShapes& shapes, const std::string& path) {
  using Kind = DynamicShapes::Kind;
  if (spec.type == "tensor") {
    INGOT_CHECK(shapes.kind_ == Kind::Static || shapes.kind_ == Kind::Tensor, ValueError,
                "[export] dynamic_shapes for tensor input '{}' must give its dims (dim -> Dim), "
                "got {}", path, shapes.str());
    dims_per_leaf.push_back(shapes.dims_);
    leaf_paths.push_back(path);
    return;
  }
  if (spec.type == "static") {
    INGOT_CHECK(shapes.is_static(), ValueError,
                "[export] dynamic_shapes gives {} for input '{}', which is not a tensor", shapes.str(),
                path);
    dims_per_leaf.emplace_back();
    leaf_paths.push_back(path);
    return;
  }
  if (spec.type == "optional") return match(spec.children.at(0), shapes, path);
  auto child_path = [&](size_t i) {
    if (i < spec.keys.size()) return path.empty() ? spec.keys[i] : path + "." + spec.keys[i];
    if (path.empty() && i < names.size()) return names[i];
    return fmt::format("{}[{}]", path.empty() ? "args" : path, i);
  };
  if (shapes.kind_ == Kind::Static) {
    for (size_t i = 0; i < spec.children.size(); ++i) match(spec.children[i], DynamicShapes(), child_path(i));
    return;
  }
  if (shapes.kind_ == Kind::Tuple) {
    INGOT_CHECK(shapes.elements_.size() == spec.children.size(), ValueError,
                "[export] dynamic_shapes for '{}' has {} entries but the input has {}",
                path.empty() ? "the inputs" : path, shapes.elements_.size(), spec.children.size());
    for (size_t i = 0; i < spec.children.size(); ++i) match(spec.children[i], shapes.elements_[i], child_path(i));
    return;
  }
  INGOT_CHECK(shapes.kind_ == Kind::Dict, ValueError,
              "[export] dynamic_shapes for '{}' gives tensor dims {}, but it is a {}", path, shapes.str(),
              spec.type);
  // By name: dict keys, user-type fields, or top-level argument names.
  std::vector<std::string> keys = spec.keys;
  if (keys.empty() && path.empty()) keys = names;
  for (const auto& [k, v] : shapes.fields_) {
    INGOT_CHECK(std::find(keys.begin(), keys.end(), k) != keys.end(), ValueError,
                "[export] dynamic_shapes names '{}', which is not an input of '{}' (inputs: {})", k,
                path.empty() ? "the function" : path, fmt::join(keys, ", "));
  }
  for (size_t i = 0; i < spec.children.size(); ++i) {
    auto it = i < keys.size() ? shapes.fields_.find(keys[i]) : shapes.fields_.end();
    match(spec.children[i], it == shapes.fields_.end() ? DynamicShapes() : it->second, child_path(i));
  }
}

}  // namespace ingot
