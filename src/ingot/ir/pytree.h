// Pytrees: nested inputs and outputs flattened to leaves plus a structure (TreeSpec),
// as torch.utils._pytree does.
//
// A leaf is a tensor (dynamic: it becomes a program input) or a static value (int,
// float, bool, string, None: baked into the program; a later call must pass the same
// value). Containers are structure: std::tuple / std::pair ("tuple"), std::vector
// ("list"), std::map<std::string, T> ("dict"), std::optional<T> (None or the value).
// User types join by specialising Pytree<T>, most simply through
//
//   struct Input { Tensor f; Tensor p; };
//   INGOT_PYTREE_DATACLASS(Input, f, p)     // like pytree.register_dataclass
//
// or, for types that are not plain aggregates, a specialisation with flatten() and
// unflatten() written by hand (see StaticCache in generation/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ingot/core/error.h"
#include "ingot/core/tensor.h"

namespace ingot {

// A static leaf value. monostate = None.
using StaticValue = std::variant<std::monostate, int64_t, double, bool, std::string>;
std::string static_value_str(const StaticValue& v);

struct Leaf {
  Tensor tensor;      // defined for tensor leaves
  StaticValue value;  // static leaves
  bool is_tensor() const { return tensor.defined(); }
};

// The structure of a flattened tree. Leaves are "tensor" or "static" (with the value
// kept here: a program is specialised to it); nodes are "tuple", "list", "dict",
// "optional" or a registered user type name, with `keys` naming the children of dicts
// and user types.
struct TreeSpec {
  std::string type = "static";
  std::vector<std::string> keys;
  std::vector<TreeSpec> children;
  StaticValue value;  // "static" leaves

  bool is_leaf() const { return type == "tensor" || type == "static"; }
  size_t num_leaves() const;
  // Paths of every leaf in order, e.g. "x", "cache.key_cache[0]", "args[1]". The
  // children of a root tuple are named by `top_names` where given.
  std::vector<std::string> leaf_paths(const std::string& root,
                                      const std::vector<std::string>& top_names = {}) const;
  std::string str() const;  // "tuple(tensor, static(3))"
  friend bool operator==(const TreeSpec&, const TreeSpec&) = default;
};

// Collects leaves while a Pytree<T>::flatten walks a value.
struct Flattener {
  std::vector<Leaf> leaves;
};

// Hands leaves back in order while Pytree<T>::unflatten rebuilds a value.
class Unflattener {
 public:
  explicit Unflattener(const std::vector<Leaf>& leaves) : leaves_(leaves) {}
  const Leaf& next(const char* what);
  bool done() const { return pos_ == leaves_.size(); }

 private:
  const std::vector<Leaf>& leaves_;
  size_t pos_ = 0;
};

template <typename T, typename = void>
struct Pytree;  // specialise: static TreeSpec flatten(const T&, Flattener&);
                //             static T unflatten(const TreeSpec&, Unflattener&);

template <typename T>
TreeSpec tree_flatten(const T& value, std::vector<Leaf>& leaves) {
  Flattener f;
  TreeSpec spec = Pytree<std::decay_t<T>>::flatten(value, f);
  leaves = std::move(f.leaves);
  return spec;
}

template <typename T>
T tree_unflatten(const TreeSpec& spec, const std::vector<Leaf>& leaves) {
  Unflattener u(leaves);
  T value = Pytree<T>::unflatten(spec, u);
  INGOT_CHECK(u.done(), ValueError, "[pytree] {} leaves left over rebuilding {}", leaves.size(),
              spec.str());
  return value;
}

// Throws ValueError naming `what` when the spec's type is not `type`.
void check_spec(const TreeSpec& spec, const char* type, const char* what);

// --- leaves ----------------------------------------------------------------------

template <>
struct Pytree<Tensor> {
  static TreeSpec flatten(const Tensor& t, Flattener& f) {
    INGOT_CHECK(t.defined(), ValueError,
                "[pytree] an undefined tensor cannot be an input or output; use std::optional");
    f.leaves.push_back(Leaf{t, {}});
    return TreeSpec{"tensor", {}, {}, {}};
  }
  static Tensor unflatten(const TreeSpec& spec, Unflattener& u) {
    check_spec(spec, "tensor", "Tensor");
    return u.next("tensor").tensor;
  }
};

// Static scalars: int / int64_t / double / float / bool / std::string.
template <typename T>
struct Pytree<T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_same_v<T, std::string>>> {
  static StaticValue to_static(const T& v) {
    if constexpr (std::is_same_v<T, bool>)
      return v;
    else if constexpr (std::is_integral_v<T>)
      return int64_t(v);
    else if constexpr (std::is_floating_point_v<T>)
      return double(v);
    else
      return v;
  }
  static TreeSpec flatten(const T& v, Flattener& f) {
    f.leaves.push_back(Leaf{Tensor(), to_static(v)});
    return TreeSpec{"static", {}, {}, to_static(v)};
  }
  static T unflatten(const TreeSpec& spec, Unflattener& u) {
    check_spec(spec, "static", "a static value");
    const StaticValue& v = u.next("static value").value;
    if constexpr (std::is_same_v<T, bool>)
      return std::get<bool>(v);
    else if constexpr (std::is_integral_v<T>)
      return T(std::get<int64_t>(v));
    else if constexpr (std::is_floating_point_v<T>)
      return T(std::get<double>(v));
    else
      return std::get<std::string>(v);
  }
};

// --- containers ------------------------------------------------------------------

template <typename T>
struct Pytree<std::optional<T>> {
  static TreeSpec flatten(const std::optional<T>& v, Flattener& f) {
    if (!v) {
      f.leaves.push_back(Leaf{});
      return TreeSpec{"static", {}, {}, std::monostate{}};
    }
    return TreeSpec{"optional", {}, {Pytree<T>::flatten(*v, f)}, {}};
  }
  static std::optional<T> unflatten(const TreeSpec& spec, Unflattener& u) {
    if (spec.type == "static") {
      u.next("None");
      return std::nullopt;
    }
    check_spec(spec, "optional", "std::optional");
    return Pytree<T>::unflatten(spec.children.at(0), u);
  }
};

template <typename T>
struct Pytree<std::vector<T>> {
  static TreeSpec flatten(const std::vector<T>& v, Flattener& f) {
    TreeSpec s{"list", {}, {}, {}};
    for (const T& e : v) s.children.push_back(Pytree<T>::flatten(e, f));
    return s;
  }
  static std::vector<T> unflatten(const TreeSpec& spec, Unflattener& u) {
    check_spec(spec, "list", "std::vector");
    std::vector<T> v;
    for (const TreeSpec& c : spec.children) v.push_back(Pytree<T>::unflatten(c, u));
    return v;
  }
};

template <typename T>
struct Pytree<std::map<std::string, T>> {
  static TreeSpec flatten(const std::map<std::string, T>& m, Flattener& f) {
    TreeSpec s{"dict", {}, {}, {}};
    for (const auto& [k, e] : m) {
      s.keys.push_back(k);
      s.children.push_back(Pytree<T>::flatten(e, f));
    }
    return s;
  }
  static std::map<std::string, T> unflatten(const TreeSpec& spec, Unflattener& u) {
    check_spec(spec, "dict", "std::map");
    std::map<std::string, T> m;
    for (size_t i = 0; i < spec.children.size(); ++i) {
      m.emplace(spec.keys.at(i), Pytree<T>::unflatten(spec.children[i], u));
    }
    return m;
  }
};

template <typename... Ts>
struct Pytree<std::tuple<Ts...>> {
  static TreeSpec flatten(const std::tuple<Ts...>& t, Flattener& f) {
    TreeSpec s{"tuple", {}, {}, {}};
    std::apply(
        [&](const auto&... e) {
          (s.children.push_back(Pytree<std::decay_t<decltype(e)>>::flatten(e, f)), ...);
        },
        t);
    return s;
  }
  static std::tuple<Ts...> unflatten(const TreeSpec& spec, Unflattener& u) {
    check_spec(spec, "tuple", "std::tuple");
    INGOT_CHECK(spec.children.size() == sizeof...(Ts), ValueError,
                "[pytree] tuple of {} elements expected, the spec has {}", sizeof...(Ts),
                spec.children.size());
    return unflatten_each(spec, u, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I>
  static std::tuple<Ts...> unflatten_each(const TreeSpec& spec, Unflattener& u,
                                          std::index_sequence<I...>) {
    // Braced initialisation evaluates left to right, so leaves are consumed in order.
    return std::tuple<Ts...>{Pytree<Ts>::unflatten(spec.children[I], u)...};
  }
};

template <typename A, typename B>
struct Pytree<std::pair<A, B>> {
  static TreeSpec flatten(const std::pair<A, B>& p, Flattener& f) {
    return Pytree<std::tuple<A, B>>::flatten(std::tuple<A, B>(p.first, p.second), f);
  }
  static std::pair<A, B> unflatten(const TreeSpec& spec, Unflattener& u) {
    auto t = Pytree<std::tuple<A, B>>::unflatten(spec, u);
    return {std::get<0>(t), std::get<1>(t)};
  }
};

}  // namespace ingot

// Registers an aggregate type whose listed fields are its children (in order), like
// torch.utils._pytree.register_dataclass. Use at global scope.
#define INGOT_PYTREE_DATACLASS(Type, ...)                                                          \
  template <>                                                                                      \
  struct ingot::Pytree<Type> {                                                                     \
    static ingot::TreeSpec flatten(const Type& v, ingot::Flattener& f) {                           \
      ingot::TreeSpec s{#Type, ingot::detail::split_field_names(#__VA_ARGS__), {}, {}};            \
      auto add = [&](const auto& field) {                                                          \
        s.children.push_back(ingot::Pytree<std::decay_t<decltype(field)>>::flatten(field, f));     \
      };                                                                                           \
      INGOT_PYTREE_FOR_EACH_FIELD(add, v, __VA_ARGS__)                                             \
      return s;                                                                                    \
    }                                                                                              \
    static Type unflatten(const ingot::TreeSpec& spec, ingot::Unflattener& u) {                    \
      ingot::check_spec(spec, #Type, #Type);                                                       \
      Type v{};                                                                                    \
      size_t child = 0;                                                                            \
      auto set = [&](auto& field) {                                                                \
        field =                                                                                    \
            ingot::Pytree<std::decay_t<decltype(field)>>::unflatten(spec.children.at(child++), u); \
      };                                                                                           \
      INGOT_PYTREE_FOR_EACH_FIELD(set, v, __VA_ARGS__)                                             \
      return v;                                                                                    \
    }                                                                                              \
  };

// Applies fn to obj.field for up to 12 fields.
#define INGOT_PYTREE_FE_1(fn, o, a) fn(o.a);
#define INGOT_PYTREE_FE_2(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_1(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_3(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_2(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_4(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_3(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_5(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_4(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_6(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_5(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_7(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_6(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_8(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_7(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_9(fn, o, a, ...) \
  fn(o.a);                               \
  INGOT_PYTREE_FE_8(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_10(fn, o, a, ...) \
  fn(o.a);                                \
  INGOT_PYTREE_FE_9(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_11(fn, o, a, ...) \
  fn(o.a);                                \
  INGOT_PYTREE_FE_10(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_12(fn, o, a, ...) \
  fn(o.a);                                \
  INGOT_PYTREE_FE_11(fn, o, __VA_ARGS__)
#define INGOT_PYTREE_FE_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, NAME, ...) NAME
#define INGOT_PYTREE_FOR_EACH_FIELD(fn, o, ...)                                                    \
  INGOT_PYTREE_FE_PICK(__VA_ARGS__, INGOT_PYTREE_FE_12, INGOT_PYTREE_FE_11, INGOT_PYTREE_FE_10,    \
                       INGOT_PYTREE_FE_9, INGOT_PYTREE_FE_8, INGOT_PYTREE_FE_7, INGOT_PYTREE_FE_6, \
                       INGOT_PYTREE_FE_5, INGOT_PYTREE_FE_4, INGOT_PYTREE_FE_3, INGOT_PYTREE_FE_2, \
                       INGOT_PYTREE_FE_1)                                                          \
  (fn, o, __VA_ARGS__)

namespace ingot::detail {
// "f, p" -> {"f", "p"}
std::vector<std::string> split_field_names(const char* names);
}  // namespace ingot::detail
