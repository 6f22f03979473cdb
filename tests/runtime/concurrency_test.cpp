// One loaded generation directory shared by several threads: each thread makes its own
// Generator (its own cache, its own compiled modules and memory pool) over the same
// programs (graphs and weights shared, never copied), and the tokens equal those of
// running the same requests one after another. Run under ThreadSanitizer by
// `tools/test tsan`.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "../models/fixture_path.h"
#include "ingot/export/serialize.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/runtime/generator.h"

namespace ingot {
namespace {

namespace fs = std::filesystem;

struct Request {
  std::vector<int64_t> prompt;
  runtime::GenerateOptions options;
};

std::vector<Request> requests() {
  std::vector<Request> out;
  for (int i = 0; i < 8; ++i) {
    Request r;
    r.prompt = {int64_t(3 + i), int64_t(17 + 2 * i), 42, int64_t(5 + i)};
    r.options.max_new_tokens = 12;
    r.options.do_sample = i % 2 == 1;  // half greedy, half sampled with their own seed
    r.options.sampling.temperature = 1.3;
    r.options.seed = uint64_t(100 + i);
    out.push_back(r);
  }
  return out;
}

TEST(Concurrency, GeneratorsOverOneLoadedDirectoryGiveTheSequentialTokens) {
  auto model = models::from_pretrained(testing::fixture_path("models/llama"));
  exporters::GenerationExportOptions g;
  g.max_cache_len = 32;
  g.multi_token_decode = false;  // prefill + decode: two programs shared
  const fs::path dir =
      fs::temp_directory_path() / ("ingot_concurrency_" + std::to_string(::getpid()));
  exporters::NativeExporter()
      .export_for_generation(*model, exporters::NativeExportConfig(), g)
      .save(dir.string(), testing::fixture_path("models/llama"));
  // The components loaded once (weights mapped once); every Generator below shares them.
  runtime::GenerationPackage components{generation::GenerationManifest::read(dir.string()), {}};
  for (const char* name : {"prefill", "decode"}) {
    components.programs.emplace(name, load((dir / (std::string(name) + ".ingot")).string()));
  }
  const std::vector<Request> rs = requests();
  std::vector<std::vector<int64_t>> sequential;
  {
    runtime::Generator gen(components);
    for (const Request& r : rs) sequential.push_back(gen.generate(r.prompt, r.options));
  }
  constexpr int kThreads = 4;
  std::vector<std::vector<std::vector<int64_t>>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      runtime::Generator gen(components);
      // Each thread runs every request, starting at a different one.
      got[size_t(t)].resize(rs.size());
      for (size_t k = 0; k < rs.size(); ++k) {
        const size_t i = (k + size_t(t)) % rs.size();
        got[size_t(t)][i] = gen.generate(rs[i].prompt, rs[i].options);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (size_t i = 0; i < rs.size(); ++i)
      EXPECT_EQ(got[size_t(t)][i], sequential[i]) << "thread " << t << " request " << i;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ingot
