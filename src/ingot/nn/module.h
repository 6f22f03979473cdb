// Module: a node of the model tree, owning named parameters, buffers and children.
//
// Names compose into fully qualified names exactly as in Hugging Face / PyTorch state
// dicts ("model.layers.0.self_attn.q_proj.weight"). Parameters and buffers live in
// slots with stable addresses: a module keeps a `Tensor*` to its slot, so replacing a
// slot's tensor (loading a checkpoint, or export swapping in traced placeholders for a
// functional call) is seen by forward() without the module knowing.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::nn {

enum class SlotKind { Parameter, Buffer };

struct Slot {
  std::string name;  // local name ("weight")
  SlotKind kind;
  bool persistent = true;  // buffers only: part of the state dict?
  Tensor value;
};

// A slot together with its fully qualified name.
struct NamedSlot {
  std::string fqn;
  Slot* slot;
};

class Module {
 public:
  explicit Module(std::string type_name) : type_name_(std::move(type_name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // "Linear", "LlamaDecoderLayer": used in errors and when replacing modules by type.
  const std::string& type_name() const { return type_name_; }

  // --- the tree -----------------------------------------------------------------------
  // Walks every (sub)module depth-first, parents first, with its qualified name.
  void visit(const std::function<void(const std::string& fqn, Module&)>& fn,
             const std::string& prefix = "");
  // Parameters and buffers of this module and its descendants, in registration order.
  std::vector<NamedSlot> named_slots(const std::string& prefix = "");
  std::vector<NamedSlot> named_parameters(const std::string& prefix = "");
  std::vector<NamedSlot> named_buffers(const std::string& prefix = "");
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }
  // Child by local name; nullptr when absent.
  std::shared_ptr<Module> child(const std::string& name) const;
  // Replaces an existing child (same name); throws ValueError naming it when absent.
  void replace_child(const std::string& name, std::shared_ptr<Module> replacement);
  // Calls fn(fqn, module) on every descendant whose type_name() is `type`; when fn returns
  // a module, it replaces that descendant. Returns how many were replaced.
  int replace_modules(
      const std::string& type,
      const std::function<std::shared_ptr<Module>(const std::string&, Module&)>& fn);

  // --- state --------------------------------------------------------------------------
  // Parameters and persistent buffers by qualified name (aliases, no copy).
  std::map<std::string, Tensor> state_dict();
  // Assigns tensors by qualified name. With strict, missing and unexpected names are
  // errors; shape or dtype mismatches are always errors. One ValueError lists every
  // problem. The tensors are stored as given (no copy: mapped weights stay mapped).
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Number of parameter elements (tied parameters counted once).
  int64_t num_parameters();

 protected:
  // Called by load_state_dict on every module of the tree, parents first, before names
  // are matched (torch's _register_load_state_dict_pre_hook). `prefix` is this module's
  // qualified name; the hook may rewrite the entries under it, e.g. resize a checkpoint
  // tensor to this module's shape. `state` holds handles: replacing one copies no data.
  virtual void load_state_dict_pre_hook(const std::string& prefix,
                                        std::map<std::string, Tensor>& state) {}

  // Registration; returns the stable slot address of the tensor.
  Tensor* register_parameter(const std::string& name, Tensor value);
  Tensor* register_buffer(const std::string& name, Tensor value, bool persistent = true);
  // Removes a parameter or buffer (a layer changing its storage form, e.g. a Linear taking
  // packed weights); pointers to its slot dangle afterwards. ValueError when absent.
  void remove_slot(const std::string& name);
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    add_child(name, m);
    return m;
  }

 private:
  void add_child(const std::string& name, std::shared_ptr<Module> m);
  Tensor* add_slot(const std::string& name, Tensor value, SlotKind kind, bool persistent);
  void check_new_name(const std::string& name) const;

  std::string type_name_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = false;
};

// "prefix.name", or just name when prefix is empty.
std::string join_name(const std::string& prefix, const std::string& name);

}  // namespace ingot::nn

namespace ingot::nn {

// Children named by index ("0", "1", ...), as torch.nn.ModuleList: "model.layers.3".
class ModuleList : public Module {
 public:
  ModuleList() : Module("ModuleList") {}
  void append(std::shared_ptr<Module> m) { register_module(std::to_string(children().size()), std::move(m)); }
  size_t size() const { return children().size(); }
  // The i-th child as M (the caller knows the element type).
  template <typename M>
  M& at(size_t i) const {
    return static_cast<M&>(*children().at(i).second);
  }
};

}  // namespace ingot::nn

namespace ingot::nn {

// Groups named children without behaviour of its own, for the name-only levels of
// transformers' trees ("model", GPT-2's "attn" and "mlp", BERT's "attention.self").
class Container : public Module {
 public:
  explicit Container(std::string type_name = "Container") : Module(std::move(type_name)) {}
  template <typename M>
  std::shared_ptr<M> add(const std::string& name, std::shared_ptr<M> m) {
    return register_module(name, std::move(m));
  }
};

}  // namespace ingot::nn
