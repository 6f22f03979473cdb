// `ingot generate (FOLDER | DIR) --prompt "..." [--max-new-tokens N] [--max-cache-len N]`:
// greedy generation (or sampled, with --temperature / --top-k / --top-p / --seed) that
// streams text, then prints prefill and decode tokens per second.
// FOLDER is a Hugging Face folder (exported in memory first); DIR holds components
// written by `ingot export FOLDER --task generation -o DIR`.
#include <cstdio>
#include <filesystem>

#include "ingot/cli/commands.h"
#include "ingot/exporters/generation_directory.h"
#include "ingot/models/tokenizer.h"
#include "ingot/runtime/generator.h"

namespace ingot::cli {

int run_generate(int argc, char** argv) {
  std::string source, prompt;
  bool have_prompt = false;
  runtime::GenerateOptions go;
  go.max_new_tokens = 64;
  std::optional<int64_t> max_cache_len;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      INGOT_CHECK(i + 1 < argc, ValueError, "[ingot generate] {} needs a value", arg);
      return argv[++i];
    };
    if (arg == "--prompt") {
      prompt = value();
      have_prompt = true;
    } else if (arg == "--max-new-tokens") {
      go.max_new_tokens = std::stoll(value());
    } else if (arg == "--temperature") {
      go.do_sample = true;
      go.sampling.temperature = std::stod(value());
    } else if (arg == "--top-k") {
      go.do_sample = true;
      go.sampling.top_k = std::stoll(value());
    } else if (arg == "--top-p") {
      go.do_sample = true;
      go.sampling.top_p = std::stod(value());
    } else if (arg == "--seed") {
      go.seed = std::stoull(value());
    } else if (arg == "--max-cache-len") {
      max_cache_len = std::stoll(value());
    } else if (!arg.empty() && arg[0] == '-') {
      INGOT_THROW(ValueError, "[ingot generate] unknown option '{}'", arg);
    } else {
      source = arg;
    }
  }
  INGOT_CHECK(
      !source.empty() && have_prompt, ValueError,
      "usage: ingot generate (FOLDER | DIR) --prompt TEXT [--max-new-tokens N] [--max-cache-len N] "
      "[--temperature T] [--top-k K] [--top-p P] [--seed S]");
  namespace fs = std::filesystem;
  const bool exported = fs::exists(fs::path(source) / "manifest.json");
  models::Tokenizer tokenizer = models::Tokenizer::from_folder(source);
  std::vector<int64_t> ids = tokenizer.encode(prompt, true);
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
  if (auto eos = tokenizer.token_to_id("<|endoftext|>")) go.stop_tokens.push_back(*eos);
  if (auto eos = tokenizer.token_to_id("</s>")) go.stop_tokens.push_back(*eos);
  // Stream: print the text of everything generated so far beyond what was printed.
  std::vector<int64_t> generated;
  std::string printed;
  std::printf("%s", prompt.c_str());
  go.on_token = [&](int64_t token) {
    generated.push_back(token);
    std::string text = tokenizer.decode(generated, true);
    if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
      std::printf("%s", text.substr(printed.size()).c_str());
      std::fflush(stdout);
      printed = text;
    }
  };
  runtime::GenerationStats stats;
  gen.generate(ids, go, &stats);
  std::printf(
      "\n\n[%lld prompt tokens, %lld new tokens (%s); prefill %.1f tokens/s, decode %.1f "
      "tokens/s]\n",
      (long long)stats.prompt_tokens, (long long)stats.new_tokens, stats.stop_reason.c_str(),
      stats.prefill_tokens_per_second(), stats.decode_tokens_per_second());
  return 0;
}

}  // namespace ingot::cli
