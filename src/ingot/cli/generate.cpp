// `ingot generate (FOLDER | DIR) (--prompt TEXT | --input NAME=FILE.npy ...)`: greedy or
// sampled generation that streams text, then prints prefill and decode tokens per second;
// with --json one JSON object instead (documented in README.md).
// FOLDER is a Hugging Face folder (exported in memory first); DIR holds the components
// written by `ingot export FOLDER --task generation -o DIR`.
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/exporters/generation_directory.h"
#include "ingot/models/npy.h"
#include "ingot/models/tokenizer.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/generator.h"

namespace ingot::cli {

namespace {

// The prompt ids from --input NAME=FILE.npy: input_ids [1, n] (int64 or int32), and an
// attention_mask, which must be all ones (the decode graphs take unpadded prompts).
std::vector<int64_t> prompt_from_inputs(const std::vector<std::string>& specs) {
  std::vector<int64_t> ids;
  bool have_ids = false;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    INGOT_CHECK(eq != std::string::npos && eq > 0, ValueError,
                "[ingot generate] --input '{}' must be NAME=FILE.npy", spec);
    const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    Tensor t = models::load_npy(file);
    INGOT_CHECK(t.dtype() == DType::I64 || t.dtype() == DType::I32, DTypeError,
                "[ingot generate] input '{}' from '{}' has dtype {}; expected int64 (or int32)",
                name, file, dtype_name(t.dtype()));
    INGOT_CHECK(t.dim() == 2 && t.size(0) == 1, ShapeError,
                "[ingot generate] input '{}' from '{}' is {}; expected [1, tokens] (batch 1)", name,
                file, t.shape_string());
    t = contiguous(to(t, DType::I64));
    const int64_t* p = t.data<int64_t>();
    if (name == "input_ids") {
      ids.assign(p, p + t.numel());
      have_ids = true;
    } else if (name == "attention_mask") {
      for (int64_t i = 0; i < t.numel(); ++i) {
        INGOT_CHECK(p[i] == 1, NotSupportedError,
                    "[ingot generate] attention_mask from '{}' masks position {}; the generation "
                    "components take unpadded prompts (drop the padding from input_ids)",
                    file, i);
      }
    } else {
      INGOT_THROW(ValueError,
                  "[ingot generate] no input named '{}' (inputs: input_ids, attention_mask)", name);
    }
  }
  INGOT_CHECK(have_ids, ValueError, "[ingot generate] --input needs input_ids=FILE.npy");
  return ids;
}

}  // namespace

int run_generate(int argc, char** argv) {
  std::string source, prompt;
  std::vector<std::string> input_specs;
  runtime::GenerateOptions go;
  go.max_new_tokens = 64;
  std::optional<int64_t> max_cache_len;
  std::optional<double> temperature, top_p;
  std::optional<int64_t> top_k;
  bool ignore_eos = false, json = false;
  CLI::App app{
      "Generates text with ingot's runtime: the prompt is prefilled in one call, then one token "
      "per "
      "step over a static KV cache written in place. Greedy unless a sampling option is given.",
      "ingot generate"};
  app.add_option("model", source,
                 "Hugging Face model folder, or a directory from ingot export --task generation")
      ->required();
  auto* text =
      app.add_option("--prompt", prompt, "the prompt text (encoded with the model's tokenizer)");
  app.add_option("--input", input_specs,
                 "NAME=FILE.npy: preprocessed inputs (input_ids, attention_mask)")
      ->excludes(text);
  app.add_option("--max-new-tokens", go.max_new_tokens, "tokens to generate at most (64)");
  app.add_option("--max-cache-len", max_cache_len,
                 "KV cache slots: of the in-memory export of a FOLDER, or a dynamic-length DIR");
  app.add_option("--temperature", temperature, "sample with this temperature");
  app.add_option("--top-k", top_k, "sample from the k most likely tokens");
  app.add_option("--top-p", top_p,
                 "sample from the smallest set of tokens reaching this probability");
  app.add_option("--seed", go.seed, "seed of the sampler (0)");
  app.add_flag("--ignore-eos", ignore_eos,
               "do not stop at end-of-sequence tokens (for benchmarks)");
  app.add_flag(
      "--json", json,
      "print one JSON object (prompt_ids, generated_ids, text, stop_reason, timings) instead of "
      "streaming");
  if (!parse(app, argc, argv)) return 0;
  INGOT_CHECK(!prompt.empty() || !input_specs.empty(), ValueError,
              "[ingot generate] give --prompt TEXT or --input input_ids=FILE.npy (see 'ingot "
              "generate --help')");
  if (temperature) go.sampling.temperature = *temperature;
  if (top_k) go.sampling.top_k = *top_k;
  if (top_p) go.sampling.top_p = *top_p;
  go.do_sample = temperature || top_k || top_p;

  namespace fs = std::filesystem;
  const bool exported = fs::exists(fs::path(source) / "manifest.json");
  models::Tokenizer tokenizer = models::Tokenizer::from_folder(source);
  std::vector<int64_t> ids =
      input_specs.empty() ? tokenizer.encode(prompt, true) : prompt_from_inputs(input_specs);
  INGOT_CHECK(!ids.empty(), ValueError,
              "[ingot generate] the prompt encodes to no tokens; give some text");
  auto make_generator = [&]() {
    if (exported) return runtime::Generator::load(source, max_cache_len);
    auto model = models::from_pretrained(source);
    exporters::GenerationExportOptions o;
    o.max_cache_len = max_cache_len.value_or(int64_t(ids.size()) + go.max_new_tokens + 1);
    return runtime::Generator(
        exporters::programs_of(exporters::NativeExporter().export_for_generation(
            *model, exporters::NativeExportConfig(), o)));
  };
  runtime::Generator gen = make_generator();
  if (!ignore_eos) {
    for (const char* eos : {"<|endoftext|>", "</s>"}) {
      if (auto id = tokenizer.token_to_id(eos)) go.stop_tokens.push_back(*id);
    }
  }
  // Stream: print the text of everything generated so far beyond what was printed.
  std::vector<int64_t> generated;
  std::string printed;
  if (!json) std::printf("%s", prompt.c_str());
  go.on_token = [&](int64_t token) {
    generated.push_back(token);
    if (json) return;
    std::string text = tokenizer.decode(generated, true);
    if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
      std::printf("%s", text.substr(printed.size()).c_str());
      std::fflush(stdout);
      printed = text;
    }
  };
  runtime::GenerationStats stats;
  gen.generate(ids, go, &stats);
  if (json) {
    nlohmann::json out = {{"prompt_ids", ids},
                          {"generated_ids", generated},
                          {"text", tokenizer.decode(generated, true)},
                          {"stop_reason", stats.stop_reason},
                          {"prompt_tokens", stats.prompt_tokens},
                          {"new_tokens", stats.new_tokens},
                          {"time_to_first_token_s", stats.prefill_seconds},
                          {"prefill_tokens_per_s", stats.prefill_tokens_per_second()},
                          {"decode_tokens_per_s", stats.decode_tokens_per_second()}};
    // Replace, not throw on, bytes of a character the last token left incomplete.
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf(
      "\n\n[%lld prompt tokens, %lld new tokens (%s); prefill %.1f tokens/s, decode %.1f "
      "tokens/s]\n",
      (long long)stats.prompt_tokens, (long long)stats.new_tokens, stats.stop_reason.c_str(),
      stats.prefill_tokens_per_second(), stats.decode_tokens_per_second());
  return 0;
}

}  // namespace ingot::cli
