// `ingot export FOLDER -o OUT [--format native|onnx|openvino|executorch|pt2|gguf] [--dynamic |
//  --dynamic-shapes spec.json] [--config config.json] [--task forward|generation]
//  [--max-cache-len N] [--opset N] [--optimize] [--external-data auto|always|never] [--genai]
//  [--compress-to-fp16] [--backend portable|xnnpack] [--dtype bfloat16]
//  [--quantize int8|int4|q4_k_m|q4_k_s|q6_k|q8_0|q4_0 [--group-size N] [--exclude PATTERN]
//   [--quantize-lm-head] [--method rtn|scale-search|gptq] [--dataset FILE [--num-samples N] [--seq-len L]]
//   [--rule PATTERN=BITS] [--preset q4_k_m] [--ratio R] [--act-order]]`:
// traces a Hugging Face model folder through an exporter (exporters/exporter.h) and saves
// the artifact: an .ingot archive (native), an .onnx model (onnx), an OpenVINO IR .xml +
// .bin (openvino), an ExecuTorch .pte program (executorch), a torch.export .pt2 (pt2) or a
// GGUF file for llama.cpp (gguf: [--outtype f32|f16|bf16]; --quantize also takes llama.cpp's
// file types q4_k_m, q4_k_s, q6_k, q8_0 and q4_0, gguf only). --config
// reads the auto-config JSON
// ({"export_format": "onnx", "dynamic": true, ...}); the other flags override it.
// --task generation writes a generation directory OUT (exporters/generation_export.h):
// "prefill" + "decode" components, or one multi-token "decode" with --multi-token-decode;
// --format onnx --genai: ONNX Runtime GenAI's directory (genai_config.json + decode.onnx
// with a growing past/present cache, onnx/genai_config.h).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/cli/program_file.h"
#include "ingot/exporters/executorch/executorch_exporter.h"
#include "ingot/exporters/gguf/gguf_exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/exporters/onnx/onnx_exporter.h"
#include "ingot/exporters/openvino/openvino_exporter.h"
#include "ingot/models/gguf_folder.h"

namespace ingot::cli {

namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream f(path);
  INGOT_CHECK(f.good(), IoError, "[ingot export] cannot read {} '{}'", what, path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace

int run_export(int argc, char** argv) {
  std::string folder, output, spec_file, config_file, task = "forward", dtype;
  std::optional<std::string> format, external_data, backend;
  std::optional<int64_t> opset, max_cache_len;
  bool dynamic = false, optimize = false, multi_token_decode = false, compress_to_fp16 = false,
       genai = false;
  CLI::App app{
      "Traces a Hugging Face model folder through an exporter and writes the artifact: an .ingot "
      "archive (native), an .onnx model, an OpenVINO IR, an ExecuTorch .pte, a .pt2 or a GGUF "
      "for llama.cpp; --task generation "
      "writes a generation directory.",
      "ingot export"};
  app.add_option("folder", folder,
                 "Hugging Face model folder (config.json + safetensors), or a .gguf file")
      ->required();
  app.add_option("-o,--output", output,
                 "the artifact (or, for --task generation, the directory) to write");
  app.add_option("--format", format,
                 "exporter: native (default), onnx, openvino, executorch, pt2 or gguf");
  auto* dyn =
      app.add_flag("--dynamic", dynamic, "batch and sequence dims of every input are dynamic");
  app.add_option("--dynamic-shapes", spec_file, "JSON spec of dynamic dims by input name")
      ->excludes(dyn);
  app.add_option("--config", config_file,
                 "auto-config JSON ({\"export_format\": ...}); flags override it");
  app.add_option("--task", task, "forward (default) or generation")
      ->check(CLI::IsMember({"forward", "generation"}));
  app.add_option("--max-cache-len", max_cache_len, "generation: static KV cache slots (256)");
  app.add_flag(
      "--multi-token-decode", multi_token_decode,
      "generation: one decode graph for the prompt and every step (else prefill + decode)");
  app.add_option("--opset", opset, "onnx: opset 17..28 (18)");
  app.add_flag("--optimize", optimize, "onnx: fold shape computations, merge constants");
  app.add_flag("--genai", genai,
               "onnx, --task generation: ONNX Runtime GenAI's directory (genai_config.json, a "
               "growing past/present KV cache)");
  app.add_option("--external-data", external_data,
                 "onnx: auto|always|never (weights in <file>.data)");
  app.add_flag("--compress-to-fp16", compress_to_fp16,
               "openvino: float32 weights stored as float16 (decompressed on load)");
  app.add_option("--backend", backend, "executorch: portable (default) or xnnpack")
      ->check(CLI::IsMember({"portable", "xnnpack"}));
  std::optional<std::string> outtype;
  app.add_option("--outtype", outtype, "gguf: type of the float matrices, f32, f16 (default) or bf16")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}));
  std::optional<std::string> kquant_search;
  app.add_option("--kquant-search", kquant_search,
                 "gguf file types: refined (default: llama.cpp's k-quant search, then refined) "
                 "or llamacpp (llama.cpp's search alone)")
      ->check(CLI::IsMember({"refined", "llamacpp"}));
  app.add_option("--dtype", dtype, "compute dtype: float32 (default) or bfloat16");
  // Weight quantisation (exporters/quantizer_config.h), every format.
  std::string quantize;
  std::optional<int64_t> group_size;
  std::vector<std::string> exclude;
  bool quantize_lm_head = false, keep_lm_head_float = false;
  app.add_option("--quantize", quantize,
                 "weight-only quantisation: int8 or int4 (every format); gguf also llama.cpp's "
                 "file types q4_k_m, q4_k_s, q6_k, q8_0 and q4_0 (= int4, group 32)")
      ->check(CLI::IsMember({"int8", "int4", "q4_k_m", "q4_k_s", "q6_k", "q8_0", "q4_0"}));
  app.add_option("--group-size", group_size, "int4: weights per scale, 32 (default), 64 or 128");
  app.add_option("--exclude", exclude, "keep linears whose weight name matches this regex float");
  app.add_flag("--quantize-lm-head", quantize_lm_head,
               "quantise the lm_head with the scheme itself (int4: int4, not int8)");
  app.add_flag("--keep-lm-head-float", keep_lm_head_float,
               "keep the lm_head float (by default it is quantised to int8 per channel)");
  std::string method, dataset, preset;
  std::optional<int64_t> num_samples, seq_len;
  std::optional<double> ratio;
  std::vector<std::string> rules;
  bool act_order = false;
  app.add_option("--method", method,
                 "how weights are rounded: rtn (default), scale-search or gptq (needs --dataset)");
  app.add_option("--dataset", dataset,
                 "calibration text: a text file, or JSONL of {\"text\"} or {\"messages\"}");
  app.add_option("--num-samples", num_samples, "calibration samples (default 128)");
  app.add_option("--seq-len", seq_len, "tokens per calibration sample (default 256)");
  app.add_option("--rule", rules, "PATTERN=BITS: weights matching PATTERN get 4 or 8 bits");
  app.add_option("--preset", preset, "mixed precision preset: q4_k_m")
      ->check(CLI::IsMember({"q4_k_m"}));
  app.add_option("--ratio", ratio,
                 "int4: fraction of parameters kept in int4; the most sensitive rest in int8");
  app.add_flag("--act-order", act_order, "gptq: columns in decreasing activation order");
  if (!parse(app, argc, argv)) return 0;
  models::LoadOptions load;
  if (!dtype.empty()) load.compute_dtype = parse_dtype(dtype);

  // The config: from --config, else the --format's defaults; flags override its fields.
  std::unique_ptr<exporters::NativeExportConfig> config;
  if (!config_file.empty()) {
    config = exporters::AutoExportConfig::from_json(read_file(config_file, "config"), config_file);
    INGOT_CHECK(!format || *format == config->export_format(), ValueError,
                "[ingot export] --format {} contradicts export_format '{}' of {}", *format,
                config->export_format(), config_file);
  } else {
    config = exporters::AutoExportConfig::from_json(
        "{\"export_format\": \"" + format.value_or("native") + "\"}", "--format");
  }
  if (dynamic) config->dynamic = true;
  if (!spec_file.empty()) {
    config->dynamic = false;
    config->dynamic_shapes_json = read_file(spec_file, "dynamic shapes spec");
    (void)config->dynamic_shapes();  // validates it, naming the file
  }
  auto* onnx_config = dynamic_cast<exporters::OnnxConfig*>(config.get());
  INGOT_CHECK(onnx_config || (!opset && !optimize && !external_data && !genai), ValueError,
              "[ingot export] --opset, --optimize, --external-data and --genai apply to --format "
              "onnx");
  INGOT_CHECK(!genai || task == "generation", ValueError,
              "[ingot export] --genai writes ONNX Runtime GenAI's generation directory: it needs "
              "--task generation");
  if (onnx_config) {
    if (genai) onnx_config->genai = true;
    if (opset) onnx_config->opset = *opset;
    if (optimize) onnx_config->optimize = true;
    if (external_data) onnx_config->external_data = *external_data;
    if (output.empty()) output = onnx_config->output_path;
  }
  // OpenVINO: the IR (model.xml + model.bin).
  auto* ov_config = dynamic_cast<exporters::OpenVINOConfig*>(config.get());
  INGOT_CHECK(ov_config || !compress_to_fp16, ValueError,
              "[ingot export] --compress-to-fp16 applies to --format openvino");
  if (ov_config) {
    if (compress_to_fp16) ov_config->compress_to_fp16 = true;
    if (output.empty()) output = ov_config->output_path;
  }
  // ExecuTorch: the kernel backend; the .pte goes to -o or the config's output_path.
  auto* et_config = dynamic_cast<exporters::ExecutorchConfig*>(config.get());
  INGOT_CHECK(et_config || !backend, ValueError,
              "[ingot export] --backend applies to --format executorch");
  if (et_config) {
    if (backend) et_config->backend = *backend;
    if (output.empty()) output = et_config->output_path;
  }
  // GGUF: the float matrices' type; the model folder is set below.
  auto* gguf_config = dynamic_cast<exporters::GgufConfig*>(config.get());
  INGOT_CHECK(gguf_config || !outtype, ValueError, "[ingot export] --outtype applies to --format gguf");
  if (gguf_config && outtype) gguf_config->outtype = *outtype;
  INGOT_CHECK(gguf_config || !kquant_search, ValueError,
              "[ingot export] --kquant-search applies to --format gguf");
  if (gguf_config && kquant_search) gguf_config->kquant_search = *kquant_search;
  // llama.cpp's file types name a GGUF's block types: q4_0 is ingot's int4 in groups of 32
  // (Q4_0 blocks of ingot's levels, any --method); the others are quantised by the GGUF
  // writer from the float weights (exporters/gguf/gguf_file_types.h).
  const bool file_type = quantize.starts_with("q");
  INGOT_CHECK(!file_type || gguf_config, ValueError,
              "[ingot export] --quantize {} is a llama.cpp GGUF file type: it needs --format gguf "
              "(format '{}' takes --quantize int8 or int4)",
              quantize, config->export_format());
  INGOT_CHECK(quantize != "q4_0" || !group_size, ValueError,
              "[ingot export] --quantize q4_0 is int4 in groups of 32 (Q4_0 blocks): --group-size "
              "applies to --quantize int4");
  if (quantize == "q4_0") {
    config->quantizer.scheme = "int4";
    config->quantizer.group_size = 32;
  } else if (!quantize.empty()) {
    config->quantizer.scheme = quantize;
  }
  INGOT_CHECK(
      !config->quantizer.gguf_file_type() ||
          (!group_size && exclude.empty() && !quantize_lm_head && !keep_lm_head_float &&
           method.empty() && rules.empty() && preset.empty() && !ratio && !act_order),
      ValueError,
      "[ingot export] --quantize {}: a llama.cpp file type fixes each tensor's type and the "
      "k-quant search; it takes --dataset (importance), --num-samples and --seq-len, not "
      "--group-size, --exclude, --quantize-lm-head, --keep-lm-head-float, --method, --rule, "
      "--preset, --ratio or --act-order",
      config->quantizer.scheme);
  INGOT_CHECK(config->quantizer.enabled() ||
                  (!group_size && exclude.empty() && !quantize_lm_head && !keep_lm_head_float &&
                   method.empty() && dataset.empty() && !num_samples && !seq_len &&
                   rules.empty() && preset.empty() && !ratio && !act_order),
              ValueError,
              "[ingot export] --group-size, --exclude, --quantize-lm-head, --keep-lm-head-float, "
              "--method, --dataset, --num-samples, --seq-len, --rule, --preset, --ratio and "
              "--act-order "
              "need --quantize");
  INGOT_CHECK(!group_size || config->quantizer.scheme == "int4", ValueError,
              "[ingot export] --group-size applies to --quantize int4 (int8 has one scale per "
              "output channel)");
  if (group_size) config->quantizer.group_size = *group_size;
  for (const std::string& p : exclude) config->quantizer.exclude.push_back(p);
  if (quantize_lm_head) config->quantizer.lm_head = true;
  if (keep_lm_head_float) config->quantizer.keep_lm_head_float = true;
  exporters::QuantizerConfig& q = config->quantizer;
  if (!method.empty()) q.method = method;
  if (!dataset.empty()) q.dataset = dataset;
  if (num_samples) q.num_samples = *num_samples;
  if (seq_len) q.seq_len = *seq_len;
  for (const std::string& r : rules) {
    const size_t eq = r.rfind('=');
    INGOT_CHECK(eq != std::string::npos && eq > 0 && (r.substr(eq + 1) == "4" || r.substr(eq + 1) == "8"),
                ValueError, "[ingot export] --rule '{}': write PATTERN=BITS with BITS 4 or 8", r);
    q.rules.push_back({r.substr(0, eq), std::stoi(r.substr(eq + 1))});
  }
  if (!preset.empty()) q.preset = preset;
  if (ratio) q.ratio = *ratio;
  if (act_order) q.act_order = true;
  // Re-reading the JSON checks the overridden fields like a config file.
  config = exporters::AutoExportConfig::from_json(config->to_json(), "the export options");
  INGOT_CHECK(!output.empty(), ValueError,
              "[ingot export] no output: give -o OUT (see 'ingot export --help')");

  const std::string source = folder;           // as the user named it, for messages
  folder = models::gguf_model_folder(folder);  // a GGUF: as a folder of its own
  // A program file (.pt2 / .ingot): lowered by the exporter, no model folder needed.
  if (is_program_file(folder)) return export_program_file(folder, *config, output);
  if (auto* g = dynamic_cast<exporters::GgufConfig*>(config.get()); g && g->model_folder.empty())
    g->model_folder = folder;  // config.json and the tokenizer
  auto model = models::from_pretrained(folder, load);
  auto exporter = exporters::AutoExporter::from_config(*config);
  if (task == "generation") {
    // A generation directory: the components, a manifest and the tokenizer files (what
    // `ingot generate DIR` loads for native components); the backend's policy (OpenVINO's
    // multi-token decode, ExecuTorch's llm_runner.pte) is the exporter's.
    exporters::GenerationExportOptions g;
    if (max_cache_len) g.max_cache_len = *max_cache_len;
    g.multi_token_decode = multi_token_decode;
    g.model_folder = folder;
    exporters::GenerationExport components = exporter->export_for_generation(*model, *config, g);
    components.save(output, folder);
    std::printf("exported %s (%s, %s) for generation: max_cache_len %lld -> %s\n", source.c_str(),
                model->architecture().c_str(), config->export_format().c_str(),
                (long long)components.manifest.max_cache_len, output.c_str());
    for (const auto& [name, artifact] : components) {
      std::printf("  %s: %zu nodes\n", artifact->component_file(name).c_str(),
                  artifact->program.graph->nodes().size());
      for (const std::string& note : artifact->notes) std::printf("    %s\n", note.c_str());
    }
    return 0;
  }
  INGOT_CHECK(!max_cache_len && !multi_token_decode, ValueError,
              "[ingot export] --max-cache-len and --multi-token-decode apply to --task generation");
  std::unique_ptr<exporters::ExportArtifact> artifact = exporter->export_(*model, *config);
  // OpenVINO's IR is two files: -o model.xml writes model.xml + model.bin; any other -o is
  // a directory that gets openvino_model.xml + .bin (optimum-intel's layout).
  if (artifact->format() == "openvino" && std::filesystem::path(output).extension() != ".xml") {
    std::filesystem::create_directories(output);
    output = (std::filesystem::path(output) / "openvino_model.xml").string();
  }
  std::vector<std::string> written;
  if (const auto* gguf = dynamic_cast<const exporters::GgufArtifact*>(artifact.get())) {
    written = gguf->write(output);
  } else {
    artifact->save(output);
  }
  if (!artifact->quantization.empty())
    exporters::write_quantization_report(output + ".quantization.json",
                                         {{"model", artifact->quantization}});
  const ExportedProgram& ep = artifact->program;
  std::printf("exported %s (%s, %s, %s): %zu nodes, %zu inputs -> %s\n", source.c_str(),
              model->architecture().c_str(), artifact->format().c_str(), task.c_str(),
              ep.graph->nodes().size(), ep.graph->inputs.size(), output.c_str());
  for (const std::string& note : artifact->notes) std::printf("  %s\n", note.c_str());
  for (const std::string& note : written) std::printf("  %s\n", note.c_str());
  return 0;
}

}  // namespace ingot::cli
