// Reading the JSON section of a .ingot archive with errors that say where.
//
// A JsonView is a JSON value together with its path in the document ("graph.nodes[3]
// .args[1]") and the archive's name. Every accessor checks the kind it expects, so the
// decoders never touch a value of the wrong type; a mismatch throws IoError:
//   [load] 'model.ingot': graph.nodes[3].target: expected a string, got a number
// Internal to the archive code (formats/archive_*.cpp, formats/serialize.cpp).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingot/core/error.h"

namespace ingot::archive {

using Json = nlohmann::json;

class JsonView {
 public:
  JsonView(const Json& j, std::string path, const std::string& origin)
      : j_(&j), path_(std::move(path)), origin_(&origin) {}

  const Json& json() const { return *j_; }
  const std::string& path() const { return path_; }
  const std::string& origin() const { return *origin_; }

  // Throws IoError "[load] 'origin': path: message".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw IoError(fmt::format("[load] '{}': {}: {}", *origin_, path_.empty() ? "(document)" : path_,
                              fmt::format(f, std::forward<Args>(args)...)));
  }

  // Object members.
  JsonView get(const char* key) const;                  // required
  std::optional<JsonView> find(const char* key) const;  // absent or null -> nullopt
  // Array elements.
  size_t size() const;  // checks that this is an array
  JsonView at(size_t i) const;
  std::vector<JsonView> elements() const;
  // (key, value) of an object, in key order.
  std::vector<std::pair<std::string, JsonView>> members() const;

  bool is_null() const { return j_->is_null(); }
  bool is_string() const { return j_->is_string(); }
  bool is_object() const { return j_->is_object(); }
  int64_t as_int() const;
  uint64_t as_uint() const;  // non-negative integer
  double as_double() const;  // a number, or "inf" / "-inf" / "nan"
  bool as_bool() const;
  const std::string& as_string() const;

 private:
  void expect(bool ok, const char* what) const;
  const Json* j_;
  std::string path_;
  const std::string* origin_;
};

// "an object", "a string", ... for messages.
const char* json_kind_name(const Json& j);

// A double as JSON: a number when finite (printed so it reads back exactly), else
// "inf" / "-inf" / "nan".
Json double_to_json(double d);

}  // namespace ingot::archive
