#include "ingot/formats/archive_json.h"

#include <cmath>
#include <limits>

namespace ingot::archive {

const char* json_kind_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a floating-point number";
    default:
      return "a binary value";
  }
}

void JsonView::expect(bool ok, const char* what) const {
  if (!ok) fail("expected {}, got {}", what, json_kind_name(*j_));
}

JsonView JsonView::get(const char* key) const {
  expect(j_->is_object(), "an object");
  auto it = j_->find(key);
  if (it == j_->end()) fail("missing key '{}'", key);
  return JsonView(*it, path_.empty() ? key : path_ + "." + key, *origin_);
}

std::optional<JsonView> JsonView::find(const char* key) const {
  expect(j_->is_object(), "an object");
  auto it = j_->find(key);
  if (it == j_->end() || it->is_null()) return std::nullopt;
  return JsonView(*it, path_.empty() ? key : path_ + "." + key, *origin_);
}

size_t JsonView::size() const {
  expect(j_->is_array(), "an array");
  return j_->size();
}

JsonView JsonView::at(size_t i) const {
  if (i >= size()) fail("index {} is past the end of an array of {}", i, j_->size());
  return JsonView((*j_)[i], fmt::format("{}[{}]", path_, i), *origin_);
}

std::vector<JsonView> JsonView::elements() const {
  std::vector<JsonView> out;
  const size_t n = size();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(at(i));
  return out;
}

std::vector<std::pair<std::string, JsonView>> JsonView::members() const {
  expect(j_->is_object(), "an object");
  std::vector<std::pair<std::string, JsonView>> out;
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    out.emplace_back(it.key(),
                     JsonView(it.value(), fmt::format("{}[\"{}\"]", path_, it.key()), *origin_));
  }
  return out;
}

int64_t JsonView::as_int() const {
  if (j_->is_number_unsigned()) {
    const uint64_t u = j_->get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max()))
      fail("integer {} does not fit in 64 bits", u);
    return int64_t(u);
  }
  expect(j_->is_number_integer(), "an integer");
  return j_->get<int64_t>();
}

uint64_t JsonView::as_uint() const {
  if (j_->is_number_unsigned()) return j_->get<uint64_t>();
  expect(j_->is_number_integer(), "a non-negative integer");
  fail("expected a non-negative integer, got {}", j_->get<int64_t>());
}

double JsonView::as_double() const {
  if (j_->is_string()) {
    const std::string& s = j_->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    fail("expected a number or \"inf\", \"-inf\", \"nan\", got \"{}\"", s);
  }
  expect(j_->is_number(), "a number");
  return j_->get<double>();
}

bool JsonView::as_bool() const {
  expect(j_->is_boolean(), "a boolean");
  return j_->get<bool>();
}

const std::string& JsonView::as_string() const {
  expect(j_->is_string(), "a string");
  return j_->get_ref<const std::string&>();
}

Json double_to_json(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}

}  // namespace ingot::archive
