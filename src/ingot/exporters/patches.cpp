#include "ingot/exporters/patches.h"

#include <algorithm>
#include <deque>
#include <map>

#include "ingot/exporters/registry.h"

namespace ingot::exporters {

namespace {

// Deques keep element addresses stable as registrations append.
std::deque<OpPatch>& op_registry() {
  static std::deque<OpPatch> r;
  return r;
}
std::deque<ModulePatch>& module_registry() {
  static std::deque<ModulePatch> r;
  return r;
}

bool for_backend(const std::string& patch_backend, const std::string& backend) {
  return patch_backend == "*" || patch_backend == backend;
}

}  // namespace

void register_op_patch(OpPatch patch, std::source_location where) {
  INGOT_CHECK(!patch.name.empty() && !patch.backend.empty() && !patch.op.empty() && patch.factory,
              InternalError,
              "[exporters] op patch at {} needs a name, a backend, an op and a factory",
              source_site(where));
  for (const OpPatch& p : op_registry()) {
    INGOT_CHECK(!(p.op == patch.op && p.backend == patch.backend), InternalError,
                "[exporters] op '{}' already has patch '{}' for backend '{}' ({}); combine them",
                patch.op, p.name, p.backend, p.where);
  }
  append_named(op_registry(), std::move(patch), "[exporters] op patch", where);
}

void register_module_patch(ModulePatch patch, std::source_location where) {
  INGOT_CHECK(
      !patch.name.empty() && !patch.backend.empty() && !patch.module_type.empty() && patch.apply,
      InternalError,
      "[exporters] module patch at {} needs a name, a backend, a module type and apply",
      source_site(where));
  append_named(module_registry(), std::move(patch), "[exporters] module patch", where);
}

std::vector<const OpPatch*> op_patches(const std::string& backend) {
  std::vector<const OpPatch*> out;
  for (const OpPatch& p : op_registry()) {
    if (for_backend(p.backend, backend)) out.push_back(&p);
  }
  return out;
}

std::vector<const ModulePatch*> module_patches(const std::string& backend) {
  std::vector<const ModulePatch*> out;
  for (const ModulePatch& p : module_registry()) {
    if (for_backend(p.backend, backend)) out.push_back(&p);
  }
  return out;
}

// Sits on top of the tracer: patched ops run their replacement (with the tracer
// underneath active, so the ops it calls are recorded), every other op passes through.
class OpPatchInterceptor final : public OpInterceptor {
 public:
  OpPatchInterceptor(PatchScope& scope, OpInterceptor* below) : scope_(scope), below_(below) {
    for (const OpPatch* p : scope.op_patches_) {
      OpImpl original = [below](const OpArgs& args) {
        InterceptorScope s(below);
        return below ? below->intercept(args) : eager_call(args);
      };
      replacements_.emplace(p->op, Entry{p, p->factory(original)});
    }
  }

  std::vector<Tensor> intercept(const OpArgs& args) override {
    auto it = replacements_.find(args.name());
    if (it == replacements_.end()) return below_ ? below_->intercept(args) : eager_call(args);
    auto& used = scope_.used_op_patches_;
    if (std::find(used.begin(), used.end(), it->second.patch->name) == used.end()) {
      used.push_back(it->second.patch->name);
    }
    InterceptorScope s(below_);  // the replacement's own op calls go to the tracer
    return it->second.impl(args);
  }

 private:
  struct Entry {
    const OpPatch* patch;
    OpImpl impl;
  };
  PatchScope& scope_;
  OpInterceptor* below_;
  std::map<std::string, Entry, std::less<>> replacements_;
};

PatchScope::PatchScope(const std::string& backend, nn::Module* model)
    : op_patches_(op_patches(backend)) {
  if (model == nullptr) return;
  try {
    for (const ModulePatch* p : module_patches(backend)) {
      bool any = false;
      model->visit([&](const std::string&, nn::Module& m) {
        if (m.type_name() != p->module_type) return;
        undo_.push_back(p->apply(m));
        any = true;
      });
      if (any) applied_modules_.push_back(p->name);
    }
  } catch (...) {
    for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
    throw;
  }
}

PatchScope::~PatchScope() {
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) {
    if (*it) (*it)();
  }
}

std::vector<std::string> PatchScope::applied() const {
  std::vector<std::string> out = applied_modules_;
  out.insert(out.end(), used_op_patches_.begin(), used_op_patches_.end());
  return out;
}

PatchScope::Active::Active(PatchScope& scope) {
  if (scope.op_patches_.empty()) return;
  interceptor_ = std::make_unique<OpPatchInterceptor>(scope, current_interceptor());
  scope_ = std::make_unique<InterceptorScope>(interceptor_.get());
}

PatchScope::Active::~Active() {
  scope_.reset();  // restores the tracer before the interceptor goes away
  interceptor_.reset();
}

}  // namespace ingot::exporters
