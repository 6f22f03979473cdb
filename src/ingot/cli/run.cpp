// `ingot run (FOLDER | model.ingot) --input name=file.npy ... -o OUTDIR [--dtype bfloat16]`:
// the eager forward of a Hugging Face model, or an exported program, on NumPy inputs,
// writing each output as OUTDIR/<name>.npy.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "ingot/cli/commands.h"
#include "ingot/export/serialize.h"
#include "ingot/models/model.h"
#include "ingot/models/npy.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"

namespace ingot::cli {

namespace {

void write_output(const std::string& outdir, const std::string& name, const Tensor& t) {
  Tensor result = t.dtype() == DType::BF16 ? to(t, DType::F32) : t;
  const std::string path = (std::filesystem::path(outdir) / (name + ".npy")).string();
  models::save_npy(path, result);
  std::printf("%s %s %s\n", path.c_str(), std::string(dtype_name(result.dtype())).c_str(),
              result.shape_string().c_str());
}

// Runs an .ingot program: inputs by the names of its user inputs, outputs by the names of
// its user outputs.
int run_program(const std::string& path, const std::map<std::string, std::string>& input_files,
                const std::string& outdir) {
  ExportedProgram ep = load(path);
  std::vector<std::string> names;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < ep.signature.inputs.size(); ++i) {
    const InputSpec& in = ep.signature.inputs[i];
    if (in.kind != InputKind::UserInput) continue;
    names.push_back(in.target);
    auto it = input_files.find(in.target);
    INGOT_CHECK(it != input_files.end(), ValueError,
                "[ingot run] '{}' needs input '{}' (--input {}=FILE.npy)", path, in.target,
                in.target);
    Tensor t = models::load_npy(it->second);
    const DType want = ep.graph->value(ep.graph->inputs[i]).dtype;
    inputs.push_back(t.dtype() == want ? t : to(t, want));
  }
  for (const auto& [name, file] : input_files) {
    INGOT_CHECK(std::find(names.begin(), names.end(), name) != names.end(), ValueError,
                "[ingot run] '{}' takes no input named '{}' (inputs: {})", path, name,
                fmt::join(names, ", "));
  }
  std::vector<Tensor> outputs = ingot::runtime::ProgramModule(ep).run(inputs);
  std::filesystem::create_directories(outdir);
  size_t k = 0;
  for (const OutputSpec& o : ep.signature.outputs) {
    if (o.kind == OutputKind::UserOutput) write_output(outdir, o.name, outputs.at(k++));
  }
  return 0;
}

}  // namespace

int run_run(int argc, char** argv) {
  std::string folder, outdir;
  std::map<std::string, std::string> input_files;
  models::LoadOptions options;
  bool hidden_states = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      INGOT_CHECK(i + 1 < argc, ValueError, "[ingot run] {} needs a value", arg);
      return argv[++i];
    };
    if (arg == "--input") {
      std::string spec = value();
      auto eq = spec.find('=');
      INGOT_CHECK(eq != std::string::npos && eq > 0, ValueError,
                  "[ingot run] --input '{}' must be NAME=FILE.npy", spec);
      input_files[spec.substr(0, eq)] = spec.substr(eq + 1);
    } else if (arg == "-o" || arg == "--output") {
      outdir = value();
    } else if (arg == "--dtype") {
      options.compute_dtype = parse_dtype(value());
    } else if (arg == "--hidden-states") {
      hidden_states = true;
    } else if (!arg.empty() && arg[0] == '-') {
      INGOT_THROW(ValueError, "[ingot run] unknown option '{}'", arg);
    } else {
      INGOT_CHECK(folder.empty(), ValueError, "[ingot run] more than one model folder given");
      folder = arg;
    }
  }
  INGOT_CHECK(
      !folder.empty() && !outdir.empty() && !input_files.empty(), ValueError,
      "usage: ingot run (FOLDER | model.ingot) --input NAME=FILE.npy [--input ...] -o OUTDIR "
      "[--dtype float32|bfloat16] [--hidden-states]");
  if (std::filesystem::is_regular_file(folder)) return run_program(folder, input_files, outdir);
  auto model = models::from_pretrained(folder, options);
  models::ModelInputs in;
  in.output_hidden_states = hidden_states;
  const auto accepted = model->input_names();
  for (const auto& [name, file] : input_files) {
    Tensor t = models::load_npy(file);
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
  std::filesystem::create_directories(outdir);
  for (const auto& [name, t] : out.named()) write_output(outdir, name, t);
  return 0;
}

}  // namespace ingot::cli
