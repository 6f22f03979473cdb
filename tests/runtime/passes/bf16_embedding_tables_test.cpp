// Bf16EmbeddingTables (runtime/passes/bf16_embedding_tables.h): an f32 embedding table whose
// values are all bf16 is held in bf16 with a cast after the gather, computing exactly what
// the program did; a table with other values, or one an f32 lm_head also reads, stays.
#include "ingot/runtime/passes/bf16_embedding_tables.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ingot/export/static_cache_pytree.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/nn/static_cache.h"
#include "ingot/ops/functional.h"
#include "ingot/runtime/program_module.h"
#include "models/fixture_path.h"
#include "runtime/program_logits.h"

namespace ingot {
namespace {

using Programs = runtime::GenerationPackage;
using testing::program_logits;

// Qwen3 fixture programs for generation; `quantised_lm_head`: int8 weights with the
// lm_head quantised too, so only `embedding` reads the f32 table.
Programs qwen3_programs(models::PretrainedModel& model, bool quantised_lm_head) {
  exporters::GenerationExportOptions o;
  o.max_cache_len = 32;
  o.multi_token_decode = false;  // a prefill and a decode program
  exporters::NativeExportConfig config;
  if (quantised_lm_head) {
    config.quantizer.scheme = "int8";
    config.quantizer.lm_head = true;
  }
  return (exporters::NativeExporter().export_for_generation(model, config, o)).package();
}

std::string table_name(const ExportedProgram& p) {
  for (const auto& [name, t] : p.state)
    if (name.ends_with("embed_tokens.weight")) return name;
  ADD_FAILURE() << "no embed_tokens.weight in the program's state";
  return "";
}

// Every program's table replaced by one whose values are bf16 (rounded once, shared).
void round_tables_to_bf16(Programs& programs) {
  const std::string name = table_name(programs.at("decode"));
  const Tensor rounded =
      contiguous(to(to(programs.at("decode").state.at(name), DType::BF16), DType::F32));
  for (auto& [component, p] : programs) p.state.at(name) = rounded;
}

TEST(Bf16EmbeddingTables, Bf16ValuedTableIsHeldInBf16WithTheSameLogits) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  Programs programs = qwen3_programs(*model, /*quantised_lm_head=*/true);
  round_tables_to_bf16(programs);
  const std::string name = table_name(programs.at("decode"));
  runtime::Bf16EmbeddingTables tables(/*min_elements=*/0);
  Programs rewritten;
  for (const auto& [component, p] : programs)
    rewritten.programs.emplace(component, tables.apply(p));
  EXPECT_EQ(tables.converted(), 1) << "one table, shared by prefill and decode";
  const Tensor& table = rewritten.at("decode").state.at(name);
  EXPECT_EQ(table.dtype(), DType::BF16);
  EXPECT_EQ(rewritten.at("prefill").state.at(name).storage(), table.storage());
  for (const char* component : {"prefill", "decode"}) {
    const std::vector<int64_t> ids = component == std::string("decode")
                                         ? std::vector<int64_t>{7}
                                         : std::vector<int64_t>{3, 1, 4, 1, 5};
    const std::vector<float> want = program_logits(programs.at(component), *model, ids);
    const std::vector<float> got = program_logits(rewritten.at(component), *model, ids);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << component << ": the logits must be bit-equal";
  }
}

TEST(Bf16EmbeddingTables, OtherTablesStayF32) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  {  // values bf16 cannot hold (the fixture's random f32 weights)
    Programs programs = qwen3_programs(*model, /*quantised_lm_head=*/true);
    runtime::Bf16EmbeddingTables tables(0);
    const ExportedProgram p = tables.apply(programs.at("decode"));
    EXPECT_EQ(tables.converted(), 0);
    EXPECT_EQ(p.graph, programs.at("decode").graph) << "unchanged";
  }
  {  // too small for the default threshold
    Programs programs = qwen3_programs(*model, true);
    round_tables_to_bf16(programs);
    runtime::Bf16EmbeddingTables tables;
    tables.apply(programs.at("decode"));
    EXPECT_EQ(tables.converted(), 0);
  }
  {  // the fixture ties its lm_head to the table: f32, it reads the table too
    Programs programs = qwen3_programs(*model, /*quantised_lm_head=*/false);
    round_tables_to_bf16(programs);
    runtime::Bf16EmbeddingTables tables(0);
    tables.apply(programs.at("decode"));
    EXPECT_EQ(tables.converted(), 0);
  }
}

}  // namespace
}  // namespace ingot
