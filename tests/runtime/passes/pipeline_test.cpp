// The load-time pass pipeline (runtime/passes/pipeline.h): every pass runs over every
// component a Generator builds, in the documented order; RuntimeOptions turn passes off
// (INGOT_DISABLE_PASSES names them, an unknown name is an error listing the passes), and
// the report says what each pass did to each component.
#include "ingot/runtime/passes/pipeline.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "ingot/core/error.h"
#include "ingot/core/huge_pages.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/runtime/generator/generator.h"
#include "models/fixture_path.h"

namespace ingot {
namespace {

runtime::GenerationPackage qwen3_package(models::PretrainedModel& model) {
  exporters::GenerationExportOptions o;
  o.max_cache_len = 32;
  o.multi_token_decode = false;  // a prefill and a decode component
  return exporters::NativeExporter()
      .export_for_generation(model, exporters::NativeExportConfig(), o)
      .package();
}

std::vector<int64_t> greedy(runtime::Generator& gen) {
  runtime::GenerateOptions go;
  go.max_new_tokens = 8;
  return gen.generate({3, 4, 5}, go);
}

TEST(PassPipeline, NamesAreTheDocumentedOrder) {
  EXPECT_EQ(
      runtime::load_pass_names(),
      (std::vector<std::string>{"huge_page_weights", "last_position_logits", "fuse_sibling_linears",
                                "fuse_silu_mul", "int8_embedding_tables", "bf16_embedding_tables",
                                "packed_linear_weights", "fuse_sibling_float_linears",
                                "small_weights_arena"}));
}

TEST(PassPipeline, EnvironmentDisablesPassesByName) {
  ::setenv("INGOT_DISABLE_PASSES", "fuse_silu_mul,last_position_logits", 1);
  const runtime::RuntimeOptions o = runtime::RuntimeOptions::from_environment();
  EXPECT_FALSE(o.pass_enabled("fuse_silu_mul"));
  EXPECT_FALSE(o.pass_enabled("last_position_logits"));
  EXPECT_TRUE(o.pass_enabled("fuse_sibling_linears"));
  ::setenv("INGOT_DISABLE_PASSES", "fuse_silu,packed", 1);
  try {
    runtime::RuntimeOptions::from_environment();
    ADD_FAILURE() << "an unknown pass name was accepted";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'fuse_silu'"), std::string::npos) << what;
    EXPECT_NE(what.find("fuse_silu_mul"), std::string::npos) << what;  // lists the passes
  }
  ::unsetenv("INGOT_DISABLE_PASSES");
}

// The report names what each pass changed in each component, and turning a pass off
// leaves its rewrite out while the tokens stay the same.
TEST(PassPipeline, GeneratorReportsEachComponentAndDisabledPassesChangeNothing) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  runtime::Generator all(qwen3_package(*model));
  const runtime::PassReport& report = all.pass_report();
  EXPECT_GT(report.changes("decode", "fuse_silu_mul"), 0);
  EXPECT_GT(report.changes("prefill", "fuse_silu_mul"), 0);
  EXPECT_EQ(report.changes("prefill", "last_position_logits"), 1);
  EXPECT_EQ(report.changes("decode", "last_position_logits"), 0);  // a decode step keeps its head
  if (huge_pages_enabled()) {
    // Every small weight moves once; the prefill's are the decode's (one copy).
    EXPECT_GT(report.changes("decode", "small_weights_arena"), 0);
  }
  const std::string text = report.str();
  EXPECT_NE(text.find("decode: "), std::string::npos) << text;
  EXPECT_NE(text.find("prefill: "), std::string::npos) << text;
  EXPECT_NE(text.find("fuse_silu_mul"), std::string::npos) << text;

  runtime::RuntimeOptions none;
  for (const std::string& name : runtime::load_pass_names()) none.disabled_passes.insert(name);
  runtime::Generator plain(qwen3_package(*model), std::nullopt, none);
  EXPECT_EQ(plain.pass_report().disabled.size(), runtime::load_pass_names().size());
  EXPECT_EQ(plain.pass_report().changes("decode", "fuse_silu_mul"), 0);
  EXPECT_NE(plain.pass_report().str().find("disabled: huge_page_weights"), std::string::npos);
  EXPECT_EQ(greedy(all), greedy(plain));
}

}  // namespace
}  // namespace ingot
