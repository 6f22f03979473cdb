#include "ingot/nn/module.h"

#include <set>

namespace ingot::nn {

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void Module::check_new_name(const std::string& name) const {
  INGOT_CHECK(!name.empty() && name.find('.') == std::string::npos, ValueError,
              "[{}] invalid member name '{}': must be non-empty without '.'", type_name_, name);
  for (const auto& s : slots_) {
    INGOT_CHECK(s->name != name, ValueError, "[{}] '{}' is already registered", type_name_, name);
  }
  for (const auto& [n, c] : children_) {
    INGOT_CHECK(n != name, ValueError, "[{}] '{}' is already registered", type_name_, name);
  }
}

Tensor* Module::add_slot(const std::string& name, Tensor value, SlotKind kind, bool persistent) {
  check_new_name(name);
  slots_.push_back(std::make_unique<Slot>(Slot{name, kind, persistent, std::move(value)}));
  return &slots_.back()->value;
}

Tensor* Module::register_parameter(const std::string& name, Tensor value) {
  return add_slot(name, std::move(value), SlotKind::Parameter, true);
}

Tensor* Module::register_buffer(const std::string& name, Tensor value, bool persistent) {
  return add_slot(name, std::move(value), SlotKind::Buffer, persistent);
}

void Module::remove_slot(const std::string& name) {
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    if ((*it)->name == name) {
      slots_.erase(it);
      return;
    }
  }
  INGOT_THROW(ValueError, "[{}] has no parameter or buffer named '{}'", type_name_, name);
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> m) {
  check_new_name(name);
  INGOT_CHECK(m != nullptr, ValueError, "[{}] child '{}' is null", type_name_, name);
  children_.emplace_back(name, std::move(m));
}

std::shared_ptr<Module> Module::child(const std::string& name) const {
  for (const auto& [n, c] : children_) {
    if (n == name) return c;
  }
  return nullptr;
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> replacement) {
  INGOT_CHECK(replacement != nullptr, ValueError, "[{}] replacement for '{}' is null", type_name_,
              name);
  for (auto& [n, c] : children_) {
    if (n == name) {
      c = std::move(replacement);
      return;
    }
  }
  INGOT_THROW(ValueError, "[{}] has no child named '{}'", type_name_, name);
}

void Module::visit(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& prefix) {
  fn(prefix, *this);
  for (auto& [name, c] : children_) c->visit(fn, join_name(prefix, name));
}

int Module::replace_modules(
    const std::string& type,
    const std::function<std::shared_ptr<Module>(const std::string&, Module&)>& fn) {
  int replaced = 0;
  std::function<void(const std::string&, Module&)> walk = [&](const std::string& prefix,
                                                             Module& m) {
    for (auto& [name, c] : m.children_) {
      const std::string fqn = join_name(prefix, name);
      if (c->type_name() == type) {
        if (auto r = fn(fqn, *c)) {
          c = std::move(r);
          ++replaced;
          continue;  // the replacement's own children are not revisited
        }
      }
      walk(fqn, *c);
    }
  };
  walk("", *this);
  return replaced;
}

std::vector<NamedSlot> Module::named_slots(const std::string& prefix) {
  std::vector<NamedSlot> out;
  visit([&](const std::string& fqn, Module& m) {
    for (auto& s : m.slots_) out.push_back({join_name(fqn, s->name), s.get()});
  }, prefix);
  return out;
}

std::vector<NamedSlot> Module::named_parameters(const std::string& prefix) {
  std::vector<NamedSlot> out;
  for (auto& ns : named_slots(prefix)) {
    if (ns.slot->kind == SlotKind::Parameter) out.push_back(ns);
  }
  return out;
}

std::vector<NamedSlot> Module::named_buffers(const std::string& prefix) {
  std::vector<NamedSlot> out;
  for (auto& ns : named_slots(prefix)) {
    if (ns.slot->kind == SlotKind::Buffer) out.push_back(ns);
  }
  return out;
}

std::map<std::string, Tensor> Module::state_dict() {
  std::map<std::string, Tensor> out;
  for (auto& ns : named_slots()) {
    if (ns.slot->kind == SlotKind::Parameter || ns.slot->persistent) out[ns.fqn] = ns.slot->value;
  }
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& given, bool strict) {
  std::map<std::string, Tensor> state = given;  // handles: the hooks may replace entries
  visit([&](const std::string& fqn, Module& m) { m.load_state_dict_pre_hook(fqn, state); });
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> known;
  std::vector<std::pair<Slot*, const Tensor*>> assignments;
  for (auto& ns : named_slots()) {
    if (ns.slot->kind == SlotKind::Buffer && !ns.slot->persistent) continue;
    known.insert(ns.fqn);
    auto it = state.find(ns.fqn);
    if (it == state.end()) {
      missing.push_back(ns.fqn);
      continue;
    }
    const Tensor& expected = ns.slot->value;
    const Tensor& got = it->second;
    if (expected.defined() &&
        (got.dtype() != expected.dtype() || shape_str(got.sym_sizes()) != shape_str(expected.sym_sizes()))) {
      mismatched.push_back(fmt::format("{}: expected {} {}, got {} {}", ns.fqn, expected.dtype(),
                                       expected.shape_string(), got.dtype(), got.shape_string()));
      continue;
    }
    assignments.emplace_back(ns.slot, &got);
  }
  for (const auto& [name, t] : state) {
    if (!known.contains(name)) unexpected.push_back(name);
  }
  std::string problems;
  if (!mismatched.empty()) problems += fmt::format("\n  shape/dtype mismatch: {}", fmt::join(mismatched, "; "));
  if (strict && !missing.empty()) problems += fmt::format("\n  missing: {}", fmt::join(missing, ", "));
  if (strict && !unexpected.empty()) problems += fmt::format("\n  unexpected: {}", fmt::join(unexpected, ", "));
  INGOT_CHECK(problems.empty(), ValueError, "[load_state_dict] {} cannot load this state dict:{}",
              type_name_, problems);
  for (auto& [slot, t] : assignments) slot->value = *t;
}

void Module::train(bool on) {
  visit([on](const std::string&, Module& m) { m.training_ = on; });
}

int64_t Module::num_parameters() {
  std::set<const void*> seen;
  int64_t n = 0;
  for (auto& ns : named_parameters()) {
    const Tensor& t = ns.slot->value;
    if (!t.defined()) continue;
    const void* key = t.has_storage() ? t.raw_data() : static_cast<const void*>(ns.slot);
    if (seen.insert(key).second) n += t.numel();
  }
  return n;
}

}  // namespace ingot::nn
