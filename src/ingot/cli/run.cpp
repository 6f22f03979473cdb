// `ingot run (FOLDER | model.ingot) --input name=file.npy ... -o OUTDIR [--dtype bfloat16]`:
// the eager forward of a Hugging Face model, or an exported program, on NumPy inputs,
// writing each output as OUTDIR/<name>.npy (--json: one JSON object listing them).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/cli/program_file.h"
#include "ingot/formats/npy.h"
#include "ingot/formats/serialize.h"
#include "ingot/models/gguf_folder.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/executor/program_module.h"

namespace ingot::cli {

namespace {

// Writes outputs as OUTDIR/<name>.npy and reports each one: a line per output, or with
// --json one object {"outputs": [{"name", "file", "dtype", "shape"}]} at the end.
class OutputWriter {
 public:
  OutputWriter(std::string outdir, bool json) : outdir_(std::move(outdir)), json_(json) {
    std::filesystem::create_directories(outdir_);
  }
  void write(const std::string& name, const Tensor& t) {
    Tensor result = t.dtype() == DType::BF16 ? to(t, DType::F32) : t;
    const std::string path = (std::filesystem::path(outdir_) / (name + ".npy")).string();
    formats::save_npy(path, result);
    const std::string dtype(dtype_name(result.dtype()));
    if (!json_) {
      std::printf("%s %s %s\n", path.c_str(), dtype.c_str(), result.shape_string().c_str());
      return;
    }
    const auto sizes = result.sizes();
    std::vector<int64_t> shape(sizes.begin(), sizes.end());
    outputs_.push_back({{"name", name}, {"file", path}, {"dtype", dtype}, {"shape", shape}});
  }
  void finish() {
    if (json_) std::printf("%s\n", nlohmann::json{{"outputs", outputs_}}.dump().c_str());
  }

 private:
  std::string outdir_;
  bool json_;
  nlohmann::json outputs_ = nlohmann::json::array();
};

// The value a model folder's forward gives an input the caller left out, so that a program
// exported from it runs on the same inputs: attention_mask all ones, position_ids
// 0..n-1 in each row, token_type_ids zeros (each [batch, n] like input_ids). Undefined
// for any other input.
Tensor default_input(const std::string& name, const Tensor& input_ids) {
  if (!input_ids.defined() || input_ids.dim() != 2) return Tensor();
  const int64_t batch = input_ids.size(0), n = input_ids.size(1);
  if (name == "attention_mask") return ones({batch, n}, DType::I64);
  if (name == "token_type_ids") return zeros({batch, n}, DType::I64);
  if (name == "position_ids")
    return contiguous(expand(reshape(arange(n, DType::I64), {1, n}), {batch, n}));
  return Tensor();
}

// Runs an .ingot program: inputs by the names of its user inputs (attention_mask,
// position_ids and token_type_ids default as in a model folder's forward), outputs by
// the names of its user outputs.
int run_program(const std::string& path, const std::map<std::string, std::string>& input_files,
                OutputWriter& writer) {
  ExportedProgram ep = load_program_file(path);
  std::vector<std::string> names;
  std::vector<Tensor> inputs;
  Tensor input_ids;
  if (auto it = input_files.find("input_ids"); it != input_files.end())
    input_ids = formats::load_npy(it->second);
  for (size_t i = 0; i < ep.signature.inputs.size(); ++i) {
    const InputSpec& in = ep.signature.inputs[i];
    if (in.kind != InputKind::UserInput) continue;
    names.push_back(in.target);
    auto it = input_files.find(in.target);
    Tensor t = it != input_files.end() ? formats::load_npy(it->second)
                                       : default_input(in.target, input_ids);
    INGOT_CHECK(t.defined(), ValueError, "[ingot run] '{}' needs input '{}' (--input {}=FILE.npy)",
                path, in.target, in.target);
    const DType want = ep.graph->value(ep.graph->inputs[i]).dtype;
    inputs.push_back(t.dtype() == want ? t : to(t, want));
  }
  for (const auto& [name, file] : input_files) {
    INGOT_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ValueError,
                "[ingot run] '{}' takes no input named '{}' (inputs: {})", path, name,
                fmt::join(names, ", "));
  }
  std::vector<Tensor> outputs = ingot::runtime::ProgramModule(ep).run(inputs);
  size_t k = 0;
  for (const OutputSpec& o : ep.signature.outputs) {
    if (o.kind == OutputKind::UserOutput) writer.write(o.name, outputs.at(k++));
  }
  writer.finish();
  return 0;
}

}  // namespace

int run_run(int argc, char** argv) {
  std::string folder, outdir, dtype;
  std::vector<std::string> input_specs;
  bool hidden_states = false, json = false;
  CLI::App app{
      "Runs the eager forward of a Hugging Face model folder, or an exported .ingot program or "
      "torch.export .pt2 archive, on "
      ".npy inputs and writes each output as OUTDIR/<name>.npy.",
      "ingot run"};
  app.add_option("model", folder, "Hugging Face model folder, model.gguf, model.ingot or model.pt2")
      ->required();
  app.add_option("--input", input_specs,
                 "NAME=FILE.npy, one per input (input_ids, attention_mask, ...)")
      ->required();
  app.add_option("-o,--output", outdir, "directory for the outputs")->required();
  app.add_option("--dtype", dtype,
                 "compute dtype of a model folder: float32 (default) or bfloat16");
  app.add_flag("--hidden-states", hidden_states,
               "also write every layer's hidden states (model folder)");
  app.add_flag("--json", json,
               "print one JSON object: {\"outputs\": [{name, file, dtype, shape}]}");
  if (!parse(app, argc, argv)) return 0;
  models::LoadOptions options;
  if (!dtype.empty()) options.compute_dtype = parse_dtype(dtype);
  std::map<std::string, std::string> input_files;
  for (const std::string& spec : input_specs) {
    auto [name, file] = parse_input_spec(spec, "ingot run");
    input_files[name] = file;
  }
  OutputWriter writer(outdir, json);
  folder = models::gguf_model_folder(folder);  // a GGUF: as a folder of its own
  if (std::filesystem::is_regular_file(folder)) return run_program(folder, input_files, writer);
  auto model = models::from_pretrained(folder, options);
  models::ModelInputs in;
  in.output_hidden_states = hidden_states;
  const auto accepted = model->input_names();
  for (const auto& [name, file] : input_files) {
    Tensor t = formats::load_npy(file);
    INGOT_CHECK(t.dtype() == DType::I64 || t.dtype() == DType::I32, DTypeError,
                "[ingot run] input '{}' from '{}' has dtype {}; expected int64 (or int32) ids",
                name, file, t.dtype());
    t = to(t, DType::I64);
    if (name == "input_ids")
      in.input_ids = t;
    else if (name == "attention_mask")
      in.attention_mask = t;
    else if (name == "position_ids")
      in.position_ids = t;
    else if (name == "token_type_ids" &&
             std::find(accepted.begin(), accepted.end(), name) != accepted.end())
      in.token_type_ids = t;
    else
      INGOT_THROW(ValueError, "[ingot run] {} takes no input named '{}' (inputs: {})",
                  model->architecture(), name, fmt::join(accepted, ", "));
  }
  models::ModelOutputs out = model->forward(in);
  for (const auto& [name, t] : out.named()) writer.write(name, t);
  writer.finish();
  return 0;
}

}  // namespace ingot::cli
