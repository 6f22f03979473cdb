// ingot::export_: trace a module or callable into an ExportedProgram
// (torch.export.export, natively).
//
//   struct M : nn::Module { Tensor forward(const Tensor& x, int y) { return add(x, y + 7); } };
//   M m;
//   ExportedProgram ep = export_(m, std::tuple{x, 3});       // add(x, 10)
//
//   Dim batch("batch", 1, 64);
//   ExportOptions o;
//   o.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::tensor({{0, batch}}), {}});
//   auto ep2 = export_(m, std::tuple{x, 3}, o);
//
// The forward runs once on traced tensors (dtype and symbolic sizes, no data); every op
// it calls becomes a node. Plain C++ values are baked in. Module parameters and buffers
// are swapped for traced inputs during the trace and restored afterwards (also on
// error). See docs/export.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ingot/ir/program.h"
#include "ingot/ir/pytree.h"
#include "ingot/nn/module.h"

namespace ingot {

// A dynamic dimension: a named symbol with an inclusive range. Two uses of Dims with the
// same name are the same symbol (so those sizes must be equal). Dim::auto_() lets export
// infer whether the dim is dynamic, specialised, or related to others; Dim::static_()
// keeps the example size.
class Dim {
 public:
  enum class Mode { Named, Auto, Static };
  explicit Dim(std::string name, int64_t min = 0,
               int64_t max = std::numeric_limits<int64_t>::max());
  static Dim auto_() { return Dim(Mode::Auto); }
  static Dim static_() { return Dim(Mode::Static); }

  Mode mode() const { return mode_; }
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  std::string str() const;  // Dim("seq", 1, 4096), Dim.AUTO, Dim.STATIC

 private:
  explicit Dim(Mode m) : mode_(m) {}
  Mode mode_ = Mode::Named;
  std::string name_;
  int64_t min_ = 0, max_ = std::numeric_limits<int64_t>::max();
};

// The dynamic_shapes tree: mirrors the inputs. A tensor gets a map dim -> Dim (dims not
// listed are static); containers mirror containers (a dict may also give a user type's
// fields by name); None (the default) means "all static" for that subtree.
class DynamicShapes {
 public:
  DynamicShapes() = default;  // static
  static DynamicShapes tensor(std::map<int, Dim> dims);
  static DynamicShapes tuple(std::vector<DynamicShapes> elements);  // also lists
  static DynamicShapes dict(std::map<std::string, DynamicShapes> fields);
  // From JSON: {"input_ids": {"0": {"name": "batch", "min": 1, "max": 64}, "1": "seq"}};
  // a string names a Dim with default range, "auto" / "static" are the special ones.
  static DynamicShapes from_json(const std::string& text, const std::string& origin);

  bool is_static() const { return kind_ == Kind::Static; }
  std::string str() const;

 private:
  friend class ShapeSpecMatcher;
  enum class Kind { Static, Tensor, Tuple, Dict };
  Kind kind_ = Kind::Static;
  std::map<int, Dim> dims_;
  std::vector<DynamicShapes> elements_;
  std::map<std::string, DynamicShapes> fields_;
};

struct ExportOptions {
  DynamicShapes dynamic_shapes;
  // Shorthand: every dim of every tensor input is Dim::auto_().
  bool dynamic = false;
  // Guards the spec does not imply become runtime asserts instead of export errors.
  bool prefer_deferred_runtime_asserts_over_guards = false;
  // Names of the top-level positional arguments ("x", "y"); default "arg0", "arg1", ...
  std::vector<std::string> input_names;
};

namespace detail {
// Runs the user function on leaves (tensor leaves replaced by traced tensors) and
// returns the flattened outputs.
using FlatFn = std::function<std::vector<Leaf>(const std::vector<Leaf>& inputs, TreeSpec& out_spec)>;
ExportedProgram export_flat(nn::Module* module, const FlatFn& fn, const TreeSpec& in_spec,
                            const std::vector<Leaf>& in_leaves, const ExportOptions& options);
}  // namespace detail

// Exports `fn(args...)`, lifting the state of `module` (may be null for a free function:
// tensors it captures become lifted constants).
template <typename Fn, typename... Args>
ExportedProgram export_(nn::Module* module, Fn&& fn, const std::tuple<Args...>& args,
                        const ExportOptions& options = {}) {
  using ArgTuple = std::tuple<Args...>;
  std::vector<Leaf> leaves;
  TreeSpec in_spec = tree_flatten(args, leaves);
  detail::FlatFn flat = [&](const std::vector<Leaf>& traced, TreeSpec& out_spec) {
    ArgTuple unflat = tree_unflatten<ArgTuple>(in_spec, traced);
    auto result = std::apply(fn, unflat);
    std::vector<Leaf> out;
    out_spec = tree_flatten(result, out);
    return out;
  };
  return detail::export_flat(module, flat, in_spec, leaves, options);
}

// Exports `module.forward(args...)`.
template <typename M, typename... Args>
  requires std::is_base_of_v<nn::Module, M>
ExportedProgram export_(M& module, const std::tuple<Args...>& args,
                        const ExportOptions& options = {}) {
  return export_(
      &module, [&module](const auto&... a) { return module.forward(a...); }, args, options);
}

}  // namespace ingot
