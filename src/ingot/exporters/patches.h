// Patches: reversible, export-time workarounds for one backend (seed 004).
//
// A patch changes how the model is traced, never the model's code:
//
//  * An op patch replaces an op's trace-time implementation. The factory receives the
//    original (which records the op as one node) and returns the replacement, which may
//    call other ops or the original. It is active only while the exporter traces, and
//    only for its backend:
//
//      INGOT_REGISTER_OP_PATCH(onnx_twice_as_add, "onnx", "mylib::twice",
//                              "the backend has no kernel for mylib::twice",
//                              [](OpImpl original) -> OpImpl { return ...; });
//
//    A patch changes the traced program for one backend only; prefer a translation or
//    a fix when the backend can express the op, so every backend lowers one program.
//
//  * A module patch changes every module of one type (by Module::type_name()) before the
//    trace and undoes the change afterwards: `apply` returns the undo function.
//
// PatchScope applies every patch registered for a backend and restores everything when
// it goes out of scope, also when the trace throws. Put a workaround next to the code
// it works around; docs/exporters.md lists the registered ones.
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "ingot/nn/module.h"
#include "ingot/ops/registry.h"

namespace ingot::exporters {

// An op's trace-time implementation: normalised arguments -> outputs.
using OpImpl = std::function<std::vector<Tensor>(const OpArgs&)>;

struct OpPatch {
  std::string name;     // "onnx_twice_as_add"
  std::string backend;  // "native", "onnx", or "*" for every backend
  std::string op;       // qualified op name: "rms_norm"
  std::string reason;   // why the backend needs it
  std::function<OpImpl(OpImpl original)> factory;
  std::string where;  // source file:line of the registration
};

struct ModulePatch {
  std::string name;
  std::string backend;
  std::string module_type;  // Module::type_name(), e.g. "RotaryEmbedding"
  std::string reason;
  // Changes one module for the export; returns how to undo it.
  std::function<std::function<void()>(nn::Module&)> apply;
  std::string where;
};

// Registration (static initialisation). A second patch for the same (backend, op) or the
// same name is an InternalError.
void register_op_patch(OpPatch patch, std::source_location where = std::source_location::current());
void register_module_patch(ModulePatch patch,
                           std::source_location where = std::source_location::current());

// The patches registered for `backend` (including "*" ones), in registration order.
std::vector<const OpPatch*> op_patches(const std::string& backend);
std::vector<const ModulePatch*> module_patches(const std::string& backend);

class OpPatchInterceptor;

// Applies the module patches of `backend` to `model` (may be null) now; op patches are
// installed by `activate()` inside the traced function. The destructor undoes every
// module change in reverse order. `applied()` names what took effect ("onnx_twice_as_add"
// once its op was actually called during the trace).
class PatchScope {
 public:
  PatchScope(const std::string& backend, nn::Module* model);
  ~PatchScope();
  PatchScope(const PatchScope&) = delete;
  PatchScope& operator=(const PatchScope&) = delete;

  // Installs the op patches on this thread (on top of the active tracer) until the
  // returned guard is destroyed.
  class Active {
   public:
    explicit Active(PatchScope& scope);
    ~Active();
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    std::unique_ptr<OpPatchInterceptor> interceptor_;
    std::unique_ptr<InterceptorScope> scope_;
  };

  std::vector<std::string> applied() const;

 private:
  friend class OpPatchInterceptor;
  std::vector<const OpPatch*> op_patches_;
  std::vector<std::function<void()>> undo_;
  std::vector<std::string> applied_modules_;
  std::vector<std::string> used_op_patches_;
};

// Wraps `fn` so that it runs with `scope`'s op patches installed: the function export_
// traces.
template <typename Fn>
auto with_patches(PatchScope& scope, Fn&& fn) {
  return [&scope, &fn](const auto&... args) {
    PatchScope::Active active(scope);
    return fn(args...);
  };
}

}  // namespace ingot::exporters

#define INGOT_EXPORTERS_CONCAT_(a, b) a##b
#define INGOT_EXPORTERS_CONCAT(a, b) INGOT_EXPORTERS_CONCAT_(a, b)

// Registers an op patch at static-initialisation time, next to the workaround.
#define INGOT_REGISTER_OP_PATCH(name, backend, op, reason, ...)                           \
  static const bool INGOT_EXPORTERS_CONCAT(kOpPatch_, name) = [] {                        \
    ::ingot::exporters::register_op_patch({#name, backend, op, reason, __VA_ARGS__, {}}); \
    return true;                                                                          \
  }()

// Registers a module patch at static-initialisation time.
#define INGOT_REGISTER_MODULE_PATCH(name, backend, module_type, reason, ...) \
  static const bool INGOT_EXPORTERS_CONCAT(kModulePatch_, name) = [] {       \
    ::ingot::exporters::register_module_patch(                               \
        {#name, backend, module_type, reason, __VA_ARGS__, {}});             \
    return true;                                                             \
  }()
