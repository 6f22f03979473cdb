#include "ingot/models/model.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "ingot/models/checkpoint.h"
#include "ingot/ops/functional.h"

namespace ingot::models {
namespace {

std::map<std::string, ModelFactory>& factories() {
  static std::map<std::string, ModelFactory> f;
  return f;
}

// Checkpoint tensors that transformers may save but no module owns.
bool ignorable(const std::string& name) {
  auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with("rotary_emb.inv_freq") || ends_with(".attn.masked_bias") ||
         ends_with(".attn.bias") || name == "lm_head.weight" ||
         ends_with(".attention.masked_bias") || ends_with(".attention.bias") ||
         ends_with("embeddings.position_ids");
}

}  // namespace

std::map<std::string, Tensor> ModelOutputs::named() const {
  std::map<std::string, Tensor> out;
  if (logits.defined()) out["logits"] = logits;
  if (last_hidden_state.defined()) out["last_hidden_state"] = last_hidden_state;
  if (pooler_output.defined()) out["pooler_output"] = pooler_output;
  if (!hidden_states.empty()) out["hidden_states"] = stack(hidden_states, 0);
  return out;
}

void check_input_ids(const ModelInputs& in, const std::string& architecture) {
  INGOT_CHECK(in.input_ids.defined() && in.input_ids.dim() == 2, ShapeError,
              "[{}] input_ids must be [batch, seq], got {}", architecture,
              in.input_ids.defined() ? in.input_ids.shape_string() : "nothing");
}

Tensor default_position_ids(const SymInt& batch, const SymInt& seq, const SymInt& past) {
  return default_position_ids(arange_symint(past, past + seq), batch);
}

Tensor default_position_ids(const Tensor& positions, const SymInt& batch) {
  return expand(unsqueeze(positions, 0), {batch, positions.sym_size(0)});  // [batch, seq]
}

ArchitectureRegistrar::ArchitectureRegistrar(const std::string& architecture, ModelFactory factory) {
  factories()[architecture] = std::move(factory);
}

std::vector<std::string> supported_architectures() {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories()) out.push_back(name);
  return out;
}

std::shared_ptr<PretrainedModel> create_model(const std::string& architecture,
                                              const ConfigReader& config,
                                              const LoadOptions& options) {
  auto it = factories().find(architecture);
  INGOT_CHECK(it != factories().end(), NotSupportedError,
              "[create_model] '{}': architecture '{}' is not supported (supported: {})",
              config.origin(), architecture, fmt::join(supported_architectures(), ", "));
  std::shared_ptr<PretrainedModel> model = it->second(config, options);
  model->architecture_ = architecture;
  model->compute_dtype_ = options.compute_dtype;
  return model;
}

std::shared_ptr<PretrainedModel> from_pretrained(const std::string& folder,
                                                 const LoadOptions& options) {
  INGOT_CHECK(options.compute_dtype == DType::F32 || options.compute_dtype == DType::BF16,
              ValueError, "[from_pretrained] compute dtype must be float32 or bfloat16, got {}",
              options.compute_dtype);
  const std::string config_path = (std::filesystem::path(folder) / "config.json").string();
  ConfigReader config = ConfigReader::from_file(config_path);
  const std::string arch = config.architecture();
  auto it = factories().find(arch);
  INGOT_CHECK(it != factories().end(), NotSupportedError,
              "[from_pretrained] '{}': architecture '{}' is not supported (supported: {})",
              config_path, arch, fmt::join(supported_architectures(), ", "));
  std::shared_ptr<PretrainedModel> model = it->second(config, options);
  model->architecture_ = arch;
  model->compute_dtype_ = options.compute_dtype;
  model->name_or_path_ = folder;

  Checkpoint checkpoint = Checkpoint::open_folder(folder);
  std::map<std::string, Tensor> state;
  std::vector<std::string> missing;
  const std::map<std::string, std::string> tied = model->tied_weights();
  for (auto& [name, expected] : model->state_dict()) {
    std::string stored = name;
    if (!checkpoint.contains(name)) {
      auto source = tied.find(name);
      if (source == tied.end() || !checkpoint.contains(source->second)) {
        missing.push_back(name);
        continue;
      }
      stored = source->second;  // tied: the source's tensor (no copy)
    }
    Tensor t = checkpoint.tensor(stored);
    // Weights stay mapped when stored in the compute dtype; otherwise converted once.
    state[name] = t.dtype() == expected.dtype() ? t : to(t, expected.dtype());
  }
  INGOT_CHECK(missing.empty(), IoError,
              "[from_pretrained] '{}' lacks tensors the {} model needs: {}", folder, arch,
              fmt::join(missing, ", "));
  std::vector<std::string> unexpected;
  std::set<std::string> expected_names;
  for (auto& [name, t] : state) expected_names.insert(name);
  for (const auto& name : checkpoint.names()) {
    const std::vector<std::string> ignored = model->ignored_checkpoint_names();
    if (!expected_names.contains(name) && !ignorable(name) && !tied.contains(name) &&
        std::find(ignored.begin(), ignored.end(), name) == ignored.end())
      unexpected.push_back(name);
  }
  INGOT_CHECK(unexpected.empty(), IoError,
              "[from_pretrained] '{}' has tensors the {} model does not use: {} (wrong "
              "architecture in config.json?)", folder, arch, fmt::join(unexpected, ", "));
  try {
    model->load_state_dict(state);
  } catch (const ValueError& e) {
    INGOT_THROW(IoError, "[from_pretrained] '{}': {}", folder, e.what());
  }
  model->eval();
  return model;
}

}  // namespace ingot::models
