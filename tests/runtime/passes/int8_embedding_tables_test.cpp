// int8_embedding_tables (runtime/passes/int8_embedding_tables.h): a quantised export's f32
// embedding table, tied to an lm_head packed as int8 rows, is read from those rows and
// leaves the program; the logits are those of the program with the table replaced by the
// dequantised rows. Tables without int8 rows beside them stay.
#include "ingot/runtime/passes/int8_embedding_tables.h"

#include <gtest/gtest.h>

#include <cstring>

#include "ingot/exporters/exporter.h"
#include "ingot/exporters/generation_export.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"
#include "ingot/ops/functional/quantized.h"
#include "ingot/runtime/passes/pipeline.h"
#include "models/fixture_path.h"
#include "runtime/program_logits.h"

namespace ingot {
namespace {

using testing::program_logits;

constexpr const char* kTable = "model.embed_tokens.weight";

runtime::GenerationPackage qwen3_programs(models::PretrainedModel& model,
                                          const exporters::QuantizerConfig& quantizer) {
  exporters::GenerationExportOptions o;
  o.max_cache_len = 32;
  o.multi_token_decode = false;  // a prefill and a decode program
  exporters::NativeExportConfig config;
  config.quantizer = quantizer;
  return (exporters::NativeExporter().export_for_generation(model, config, o)).package();
}

TEST(Int8EmbeddingTables, TiedTableIsReadFromTheLmHeadsInt8Rows) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  exporters::QuantizerConfig int4;
  int4.scheme = "int4";  // the lm_head (tied to the table) int8 per channel: the default
  runtime::GenerationPackage programs = qwen3_programs(*model, int4);
  for (const auto& [component, program] : programs) {
    ASSERT_TRUE(program.state.contains(kTable)) << component;
    ExportedProgram rewritten = program;
    EXPECT_EQ(runtime::read_embeddings_from_int8_rows(rewritten), 1) << component;
    EXPECT_FALSE(rewritten.state.contains(kTable)) << component << ": the f32 table leaves";
    // The reference: the original program with its table replaced by the int8 rows,
    // dequantised.
    ExportedProgram reference = program;
    reference.state.at(kTable) = dequantize_weight(program.state.at("model.embed_tokens.qweight"),
                                                   program.state.at("model.embed_tokens.scales"),
                                                   Tensor(), 8, program.state.at(kTable).size(1));
    const std::vector<int64_t> ids =
        component == "decode" ? std::vector<int64_t>{7} : std::vector<int64_t>{3, 1, 4, 1, 5};
    const std::vector<float> want = program_logits(reference, *model, ids);
    const std::vector<float> got = program_logits(rewritten, *model, ids);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
        << component << ": the logits must be bit-equal";
  }
  // The pipeline runs it on every component.
  runtime::PassPipeline pipeline;
  for (auto& [component, program] : programs.programs) pipeline.run(program, {component});
  EXPECT_EQ(pipeline.report().changes("decode", "int8_embedding_tables"), 1);
  EXPECT_EQ(pipeline.report().changes("prefill", "int8_embedding_tables"), 1);
}

TEST(Int8EmbeddingTables, TablesWithoutInt8RowsStay) {
  auto model = models::from_pretrained(testing::fixture_path("models/qwen3"));
  exporters::QuantizerConfig keep;
  keep.scheme = "int8";
  keep.keep_lm_head_float = true;  // the tied lm_head (and so the table) stays f32
  exporters::QuantizerConfig as_int4;
  as_int4.scheme = "int4";
  as_int4.lm_head = true;  // the lm_head in int4 groups: not rows the table can take
  for (const exporters::QuantizerConfig& q : {exporters::QuantizerConfig{}, keep, as_int4}) {
    ExportedProgram p = qwen3_programs(*model, q).programs.at("decode");
    EXPECT_EQ(runtime::read_embeddings_from_int8_rows(p), 0) << q.scheme;
    EXPECT_TRUE(p.state.contains(kTable)) << q.scheme;
  }
}

}  // namespace
}  // namespace ingot
