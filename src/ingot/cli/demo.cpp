// `ingot demo [FIXTURES]`: loads every committed tiny Hugging Face checkpoint
// (tests/fixtures/models by default), runs the eager forward on its recorded inputs,
// compares with the logits transformers produced, then greedily decodes a few tokens
// with the KV cache.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "ingot/cli/app.h"
#include "ingot/cli/commands.h"
#include "ingot/formats/npy.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;

// Max |a - b| over non-padding positions of [batch, seq, ...] outputs.
double max_diff_unpadded(const Tensor& a, const Tensor& b, const Tensor& mask) {
  Tensor d = abs(sub(a, b));                         // [b, s, ...]
  Tensor per_pos = amax(d, {-1});                    // [b, s]
  Tensor kept = mul(per_pos, to(mask, DType::F32));  // padding -> 0
  return amax(kept).item<double>();
}

// Greedy continuation of `prompt` ([1, n]) for `steps` tokens with the eager KV cache.
std::vector<int64_t> greedy(models::PretrainedModel& model, const Tensor& prompt, int steps) {
  nn::KVCache cache;
  models::ModelInputs in;
  in.cache = &cache;
  in.input_ids = prompt;
  std::vector<int64_t> out;
  for (int i = 0; i < steps; ++i) {
    Tensor logits = model.forward(in).logits;  // [1, s, vocab]
    int64_t next = argmax(select(select(logits, 0, 0), 0, -1)).item<int64_t>();
    out.push_back(next);
    in.input_ids = Tensor::from_vector<int64_t>({next}, {1, 1});
  }
  return out;
}

}  // namespace

int run_demo(int argc, char** argv) {
  std::string root = "tests/fixtures/models";
  CLI::App app{
      "Loads every tiny Hugging Face checkpoint under FIXTURES, compares its eager forward with "
      "the logits transformers recorded and decodes a few tokens greedily.",
      "ingot demo"};
  app.add_option("fixtures", root, "folder of checkpoints (tests/fixtures/models)");
  if (!parse(app, argc, argv)) return 0;
  INGOT_CHECK(fs::is_directory(root), IoError,
              "[ingot demo] '{}' is not a folder of Hugging Face checkpoints (run from the "
              "repository root, or pass the folder)",
              root);
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(root)) {
    if (fs::exists(e.path() / "config.json")) folders.push_back(e.path());
  }
  std::sort(folders.begin(), folders.end());
  std::printf("ingot eager forward vs Hugging Face transformers (tiny random checkpoints)\n\n");
  std::printf("%-30s %-20s %9s %9s %12s  %s\n", "checkpoint", "architecture", "params", "load ms",
              "max |diff|", "greedy tokens (KV cache)");
  for (const auto& dir : folders) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = models::from_pretrained(dir.string());
    double load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    models::ModelInputs in;
    in.input_ids = formats::load_npy((dir / "input_ids.npy").string());
    in.attention_mask = formats::load_npy((dir / "attention_mask.npy").string());
    if (fs::exists(dir / "token_type_ids.npy"))
      in.token_type_ids = formats::load_npy((dir / "token_type_ids.npy").string());
    models::ModelOutputs out = model->forward(in);
    const bool causal = out.logits.defined();
    const std::string key = causal ? "logits" : "last_hidden_state";
    Tensor reference = formats::load_npy((dir / (key + ".npy")).string());
    double diff = max_diff_unpadded(causal ? out.logits : out.last_hidden_state, reference,
                                    in.attention_mask);
    std::string tokens =
        causal
            ? fmt::format(
                  "{}",
                  fmt::join(greedy(*model, slice(slice(in.input_ids, 0, 0, 1), 1, 0, 4), 8), " "))
            : "(encoder)";
    std::printf("%-30s %-20s %9lld %9.2f %12.2e  %s\n", dir.filename().c_str(),
                model->architecture().c_str(), (long long)model->num_parameters(), load_ms, diff,
                tokens.c_str());
  }
  return 0;
}

}  // namespace ingot::cli
