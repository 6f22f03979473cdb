#include "ingot/exporters/pretrained.h"

#include "ingot/ops/functional.h"

namespace ingot {

namespace {
constexpr const char* kFields[] = {"input_ids", "attention_mask", "position_ids", "token_type_ids"};

Tensor models::ModelInputs::*field(size_t i) {
  static Tensor models::ModelInputs::*const kMembers[] = {
      &models::ModelInputs::input_ids, &models::ModelInputs::attention_mask,
      &models::ModelInputs::position_ids, &models::ModelInputs::token_type_ids};
  return kMembers[i];
}
}  // namespace

TreeSpec Pytree<models::ModelInputs>::flatten(const models::ModelInputs& in, Flattener& f) {
  TreeSpec s{"ModelInputs", {}, {}, {}};
  for (size_t i = 0; i < std::size(kFields); ++i) {
    s.keys.push_back(kFields[i]);
    s.children.push_back(Pytree<std::optional<Tensor>>::flatten(
        (in.*field(i)).defined() ? std::optional<Tensor>(in.*field(i)) : std::nullopt, f));
  }
  return s;
}

models::ModelInputs Pytree<models::ModelInputs>::unflatten(const TreeSpec& spec, Unflattener& u) {
  check_spec(spec, "ModelInputs", "models::ModelInputs");
  models::ModelInputs in;
  for (size_t i = 0; i < std::size(kFields); ++i) {
    std::optional<Tensor> t = Pytree<std::optional<Tensor>>::unflatten(spec.children.at(i), u);
    if (t) in.*field(i) = *t;
  }
  return in;
}

}  // namespace ingot

namespace ingot::exporters {

models::ModelInputs example_model_inputs(const models::PretrainedModel& model, int64_t batch,
                                         int64_t seq) {
  models::ModelInputs in;
  std::vector<int64_t> ids(size_t(batch * seq));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t(i % 100);
  in.input_ids = Tensor::from_vector(ids, {batch, seq});
  in.attention_mask = ones({batch, seq}, DType::I64);
  const auto names = model.input_names();
  if (std::find(names.begin(), names.end(), "token_type_ids") != names.end()) {
    in.token_type_ids = zeros({batch, seq}, DType::I64);
  }
  return in;
}

ExportedProgram export_pretrained(models::PretrainedModel& model,
                                  const PretrainedExportOptions& o) {
  models::ModelInputs example = example_model_inputs(model, o.example_batch, o.example_seq);
  ExportOptions options;
  options.input_names = {""};  // the fields are the inputs: "input_ids", not "arg0.input_ids"
  if (o.dynamic_shapes) {
    options.dynamic_shapes = DynamicShapes::tuple({*o.dynamic_shapes});
  } else if (o.dynamic) {
    std::map<std::string, DynamicShapes> per_input;
    for (size_t i = 0; i < std::size(kFields); ++i) {
      if (!(example.*field(i)).defined()) continue;  // absent inputs are static None
      const char* name = kFields[i];
      per_input.emplace(name, DynamicShapes::tensor({{0, Dim("batch", 1, o.max_batch)},
                                                     {1, Dim("seq", 1, o.max_seq)}}));
    }
    options.dynamic_shapes = DynamicShapes::tuple({DynamicShapes::dict(per_input)});
  }
  auto forward = [&model](const models::ModelInputs& in) {
    models::ModelOutputs out = model.forward(in);
    std::map<std::string, Tensor> named = out.named();
    if (named.contains("logits"))
      return std::map<std::string, Tensor>{{"logits", named.at("logits")}};
    return named;
  };
  return ingot::export_(&model, forward, std::tuple{example}, options);
}

}  // namespace ingot::exporters
