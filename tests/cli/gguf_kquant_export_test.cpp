// `ingot export --format gguf --quantize q4_k_m|q4_k_s|q6_k|q8_0|q4_0`: llama.cpp's file
// types. Each matrix gets the type llama.cpp's rules give it (Q6_K output and "more bits"
// layers, the fallbacks for rows that are not whole 256-blocks), its bytes are exactly the
// quantiser's (formats/ggml_quantize.h) on the folder's weight (q / k rows permuted), with
// the calibration's importance when --dataset is given (refined by default, llama.cpp's
// search alone with --kquant-search llamacpp), general.file_type is llama.cpp's
// number, ingot reads the file back within the scheme's error, and bad combinations are
// errors naming the flag. With --kquant-search llamacpp the file is byte for byte what
// llama.cpp's own quantiser writes from the same weights. (llama.cpp running these files:
// gguf_export_test.cpp's judge.)
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../error_of.h"
#include "../venv_tool.h"
#include "cli_call.h"
#include "gguf_fixture_folders.h"
#include "ingot/cli/commands.h"
#include "ingot/exporters/calibration.h"
#include "ingot/exporters/config.h"
#include "ingot/exporters/exporter.h"
#include "ingot/exporters/gguf/gguf_file_types.h"
#include "ingot/exporters/quantizer_config.h"
#include "ingot/formats/ggml_quantize.h"
#include "ingot/formats/gguf.h"
#include "ingot/models/gguf_weights.h"
#include "ingot/models/model.h"
#include "ingot/ops/functional.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;
using cli_testing::with_tokenizer;
using formats::GgmlType;
using ingot::testing::error_of;

std::string demo_folder() {
  return (ingot::testing::source_dir() / "assets/demo-lm").string();
}

class CliGgufKQuant : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("ingot_cli_gguf_kquant_" + std::to_string(::getpid()));
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
    setenv("XDG_CACHE_HOME", (tmp_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("XDG_CACHE_HOME");
    fs::remove_all(tmp_);
  }
  // Writes FOLDER as file type `q` (plus `extra` flags); returns the path and the printout.
  std::pair<std::string, std::string> write(const std::string& folder, const std::string& q,
                                            std::vector<std::string> extra = {}) {
    const std::string out = (tmp_ / (q + ".gguf")).string();
    std::vector<std::string> args = {folder, "--format", "gguf", "--quantize", q, "-o", out};
    args.insert(args.end(), extra.begin(), extra.end());
    auto [rc, printed] = captured(run_export, args);
    EXPECT_EQ(rc, 0);
    return {out, printed};
  }
  fs::path tmp_;
};

std::string type_of(const formats::GgufFile& f, const std::string& name) {
  return formats::ggml_type_name(f.tensor_info(name).type);
}

// The bytes the file holds for `gguf_name` equal the quantiser's on the folder's weight
// `hf_name` (q / k rows permuted as llama.cpp's rope wants), with `importance`.
void expect_quantiser_bytes(const formats::GgufFile& f, const std::string& gguf_name,
                            const Tensor& weight, const float* importance,
                            formats::KQuantSearch search = formats::KQuantSearch::Refined) {
  const formats::GgufTensorInfo& t = f.tensor_info(gguf_name);
  const Tensor w = contiguous(to(weight, DType::F32));
  const std::vector<uint8_t> want =
      formats::quantize_rows(t.type, w.data<float>(), w.size(0), w.size(1), importance, search);
  ASSERT_EQ(want.size(), t.nbytes) << gguf_name;
  EXPECT_EQ(std::memcmp(want.data(), f.tensor_data(t), want.size()), 0) << gguf_name;
}

// The demo LM (4 layers, hidden 256, intermediate 688, tied embedding) as Q4_K_M: Q4_K
// matrices; attn_v Q6_K in the "more bits" layers 2 and 3 (use_more_bits(i, 4)); ffn_down
// (rows of 688, not whole 32-blocks) F16; the tied token_embd Q6_K (llama.cpp multiplies
// with it); norms F32; general.file_type 15 (LLAMA_FTYPE_MOSTLY_Q4_K_M).
TEST_F(CliGgufKQuant, Q4KMTypesBytesAndReadBack) {
  auto [out, printed] = write(demo_folder(), "q4_k_m");
  EXPECT_NE(printed.find("gguf q4_k_m (llama.cpp file type 15)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("no importance (no dataset)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("blk.0.ffn_down.weight: q4_k_m; rows of 688 are not whole Q4_K "
                         "blocks: F16"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("blk.3.ffn_down.weight: ffn_down in layer 3 of 4 (more bits); rows of "
                         "688 are not whole Q6_K blocks: F16"),
            std::string::npos)
      << printed;
  const formats::GgufFile f = formats::GgufFile::open(out);
  EXPECT_EQ(f.get_int("general.file_type"), 15);
  EXPECT_EQ(f.get_int("general.quantization_version"), 2);
  EXPECT_FALSE(f.contains("output.weight"));
  EXPECT_EQ(type_of(f, "token_embd.weight"), "Q6_K");
  for (int l = 0; l < 4; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    for (const char* m : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"})
      EXPECT_EQ(type_of(f, b + m + ".weight"), "Q4_K") << b << m;
    EXPECT_EQ(type_of(f, b + "attn_v.weight"), l >= 2 ? "Q6_K" : "Q4_K") << l;
    EXPECT_EQ(type_of(f, b + "ffn_down.weight"), "F16") << l;
    EXPECT_EQ(type_of(f, b + "attn_norm.weight"), "F32") << l;
  }
  // Bytes: the quantiser's, no importance; q / k permuted for llama.cpp's rope.
  auto model = models::from_pretrained(demo_folder());
  const auto folder_state = model->state_dict();
  expect_quantiser_bytes(f, "token_embd.weight", folder_state.at("model.embed_tokens.weight"),
                         nullptr);
  expect_quantiser_bytes(f, "blk.2.attn_v.weight",
                         folder_state.at("model.layers.2.self_attn.v_proj.weight"), nullptr);
  expect_quantiser_bytes(
      f, "blk.1.attn_q.weight",
      models::permute_rope_rows(folder_state.at("model.layers.1.self_attn.q_proj.weight"), 8),
      nullptr);
  expect_quantiser_bytes(
      f, "blk.1.attn_k.weight",
      models::permute_rope_rows(folder_state.at("model.layers.1.self_attn.k_proj.weight"), 4),
      nullptr);
  // --kquant-search llamacpp: llama.cpp's search alone (what llama-quantize writes).
  {
    const std::string plain = (tmp_ / "llamacpp.gguf").string();
    ASSERT_EQ(captured(run_export, {demo_folder(), "--format", "gguf", "--quantize", "q4_k_m",
                                    "--kquant-search", "llamacpp", "-o", plain})
                  .first,
              0);
    const formats::GgufFile g = formats::GgufFile::open(plain);
    expect_quantiser_bytes(g, "blk.2.attn_v.weight",
                           folder_state.at("model.layers.2.self_attn.v_proj.weight"), nullptr,
                           formats::KQuantSearch::LlamaCpp);
    expect_quantiser_bytes(g, "blk.0.ffn_up.weight",
                           folder_state.at("model.layers.0.mlp.up_proj.weight"), nullptr,
                           formats::KQuantSearch::LlamaCpp);
  }
  // ingot reads it back: each matrix within Q4_K's error of the folder's (relative RMS).
  auto back = models::from_pretrained(out);
  for (const auto& [name, t] : back->state_dict()) {
    const Tensor a = contiguous(to(t, DType::F32));
    const Tensor b = contiguous(to(folder_state.at(name), DType::F32));
    double num = 0, den = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      const double d = a.data<float>()[i] - b.data<float>()[i];
      num += d * d;
      den += double(b.data<float>()[i]) * b.data<float>()[i];
    }
    const double rel = std::sqrt(num / std::max(den, 1e-30));
    EXPECT_LT(rel, a.dim() == 1 ? 1e-7 : 0.12) << name;  // Q4_K measured 0.07 .. 0.09
  }
}

// --dataset: every Q4_K / Q6_K matrix (25 of the demo LM's: ffn_down is F16) is searched with the
// importance of the calibration inputs of the linear that reads it (the same bytes as the quantiser
// given the calibration's mean squares), and differs from the uncalibrated file.
TEST_F(CliGgufKQuant, DatasetGivesTheSearchTheCalibrationImportance) {
  const std::string dataset = (tmp_ / "calibration.txt").string();
  {
    std::ofstream d(dataset);
    for (int i = 0; i < 40; ++i)
      d << "Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy "
           "disposition, seemed to unite some of the best blessings of existence. ";
  }
  auto [out, printed] = write(demo_folder(), "q4_k_m",
                              {"--dataset", dataset, "--num-samples", "8", "--seq-len", "32"});
  EXPECT_NE(printed.find("25 weighted by calibration importance"), std::string::npos) << printed;
  const formats::GgufFile f = formats::GgufFile::open(out);
  auto model = models::from_pretrained(demo_folder());
  const auto state = model->state_dict();
  const exporters::CalibrationSet set =
      exporters::read_calibration_set(dataset, demo_folder(), 8, 32);
  const auto stats = exporters::calibrate(*model, set, exporters::CalibrationNeed::Importance);
  auto importance = [&](const std::string& hf) {
    const exporters::ActivationStats* s = stats->of(hf);
    EXPECT_NE(s, nullptr) << hf;
    return s ? s->mean_square.data() : nullptr;
  };
  const std::string v = "model.layers.3.self_attn.v_proj.weight";
  const std::string o = "model.layers.0.self_attn.o_proj.weight";
  const std::string q = "model.layers.2.self_attn.q_proj.weight";
  expect_quantiser_bytes(f, "blk.3.attn_v.weight", state.at(v), importance(v));
  expect_quantiser_bytes(f, "blk.0.attn_output.weight", state.at(o), importance(o));
  expect_quantiser_bytes(f, "blk.2.attn_q.weight", models::permute_rope_rows(state.at(q), 8),
                         importance(q));
  expect_quantiser_bytes(f, "token_embd.weight", state.at("model.embed_tokens.weight"),
                         importance("model.embed_tokens.weight"));
  const formats::GgufFile plain = formats::GgufFile::open(write(demo_folder(), "q4_k_m").first);
  const formats::GgufTensorInfo& a = f.tensor_info("blk.0.attn_output.weight");
  EXPECT_NE(std::memcmp(f.tensor_data(a), plain.tensor_data(plain.tensor_info(a.name)), a.nbytes),
            0);
}

// Rows that are not whole 256-blocks fall back as llama.cpp's: Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0 (the tiny llama fixture: hidden 64, untied output); q8_0 is Q8_0 everywhere;
// q4_k_s puts attn_v of layers 0..3 in Q5_K; q4_0 is ingot's int4 in groups of 32 (Q4_0).
TEST_F(CliGgufKQuant, FileTypesAndFallbacks) {
  const std::string llama = with_tokenizer("llama", tmp_);
  {
    const formats::GgufFile f = formats::GgufFile::open(write(llama, "q4_k_m").first);
    EXPECT_EQ(type_of(f, "blk.0.attn_q.weight"), "Q5_0");
    EXPECT_EQ(type_of(f, "blk.0.attn_v.weight"), "Q5_0");  // 2 layers: layer 1 has more bits
    EXPECT_EQ(type_of(f, "blk.1.attn_v.weight"), "Q8_0");  // more bits: Q6_K -> Q8_0
    EXPECT_EQ(type_of(f, "blk.1.ffn_down.weight"), "Q8_0");
    EXPECT_EQ(type_of(f, "token_embd.weight"), "Q5_0");  // untied: the base type
    EXPECT_EQ(type_of(f, "output.weight"), "Q8_0");      // rows of 64: Q8_0
  }
  {
    const formats::GgufFile f = formats::GgufFile::open(write(llama, "q4_k_s").first);
    EXPECT_EQ(f.get_int("general.file_type"), 14);
    EXPECT_EQ(type_of(f, "blk.0.attn_v.weight"), "Q5_1");  // Q5_K -> Q5_1
    EXPECT_EQ(type_of(f, "blk.0.attn_q.weight"), "Q5_0");
  }
  {
    const formats::GgufFile f = formats::GgufFile::open(write(demo_folder(), "q4_k_s").first);
    EXPECT_EQ(type_of(f, "blk.3.attn_v.weight"), "Q5_K");
    EXPECT_EQ(type_of(f, "blk.3.attn_q.weight"), "Q4_K");
  }
  {
    const formats::GgufFile f = formats::GgufFile::open(write(demo_folder(), "q6_k").first);
    EXPECT_EQ(f.get_int("general.file_type"), 18);
    EXPECT_EQ(type_of(f, "blk.0.attn_q.weight"), "Q6_K");
    EXPECT_EQ(type_of(f, "token_embd.weight"), "Q6_K");
  }
  {
    const formats::GgufFile f = formats::GgufFile::open(write(demo_folder(), "q8_0").first);
    EXPECT_EQ(f.get_int("general.file_type"), 7);
    EXPECT_EQ(type_of(f, "blk.0.attn_q.weight"), "Q8_0");
    EXPECT_EQ(type_of(f, "token_embd.weight"), "Q8_0");
    EXPECT_EQ(type_of(f, "blk.0.ffn_down.weight"), "F16");  // 688: not whole 32-blocks
  }
  {
    auto [out, printed] = write(demo_folder(), "q4_0");
    EXPECT_NE(printed.find("int4 (group 32)"), std::string::npos) << printed;
    const formats::GgufFile f = formats::GgufFile::open(out);
    EXPECT_EQ(f.get_int("general.file_type"), 2);
    EXPECT_EQ(type_of(f, "blk.0.attn_q.weight"), "Q4_0");
  }
}

// ── llama.cpp's own quantiser as the judge of the bytes ──

const ingot::testing::VenvTool& llamacpp() {
  static const ingot::testing::VenvTool t{"llama.cpp", "INGOT_LLAMACPP_VENV", "llamacpp-venv",
                                          "tools/llamacpp", "tools/llamacpp/setup-venv"};
  return t;
}

struct SameBytesCase {
  std::string folder;     // "demo-lm", a fixture model, or "smollm2" (when fetched)
  std::string file_type;  // ingot's --quantize
  int ftype;              // llama.cpp's llama_ftype of it
};

class CliGgufKQuantLlamaQuantize : public CliGgufKQuant,
                                   public ::testing::WithParamInterface<SameBytesCase> {};

// `--kquant-search llamacpp` writes the very bytes llama.cpp's llama-quantize writes from
// the same weights (ingot's F32 file of the folder, quantised by llama_model_quantize
// without an importance matrix): every tensor's type and bytes
// (tools/llamacpp/quantize_compare.py). The demo LM covers Q4_K, Q5_K, Q6_K, Q8_0 and the
// F16 fallback, the llama fixture the Q5_0 / Q5_1 / Q8_0 fallbacks of 64-wide rows,
// SmolLM2 a real checkpoint (576-wide rows).
TEST_P(CliGgufKQuantLlamaQuantize, LlamaCppSearchWritesLlamaQuantizesBytes) {
  if (!llamacpp().exists()) GTEST_SKIP() << llamacpp().skip_reason();
  const SameBytesCase& p = GetParam();
  std::string folder;
  if (p.folder == "demo-lm") {
    folder = demo_folder();
  } else if (p.folder == "smollm2") {
    const char* home = std::getenv("HOME");
    folder =
        (fs::path(home ? home : "/") / ".cache/ingot/checkpoints/SmolLM2-135M-Instruct").string();
    if (!fs::exists(fs::path(folder) / "model.safetensors"))
      GTEST_SKIP() << "no SmolLM2 folder at " << folder << " (tools/reference/fetch_smollm2.py)";
  } else {
    folder = with_tokenizer(p.folder, tmp_);
  }
  const std::string f32 = (tmp_ / "f32.gguf").string();
  ASSERT_EQ(captured(run_export, {folder, "--format", "gguf", "--outtype", "f32", "-o", f32}).first,
            0);
  const std::string ours = write(folder, p.file_type, {"--kquant-search", "llamacpp"}).first;
  const auto r = llamacpp().run("quantize_compare.py", {f32, ours, std::to_string(p.ftype)});
  ASSERT_EQ(r.status, 0) << r.log;
  ASSERT_TRUE(r.summary.is_object()) << r.log;
  const nlohmann::json& s = r.summary;
  std::printf("[llama-quantize] %s %s: %d of %d tensors byte-identical\n", p.folder.c_str(),
              p.file_type.c_str(), s["bytes_identical"].get<int>(), s["tensors"].get<int>());
  EXPECT_TRUE(s["names_equal"].get<bool>()) << r.log;
  EXPECT_TRUE(s["types_differ"].empty()) << s["types_differ"].dump();
  EXPECT_TRUE(s["bytes_differ"].empty()) << s["bytes_differ"].dump();
  EXPECT_EQ(s["bytes_identical"], s["tensors"]);
  EXPECT_EQ(s["file_type"], nlohmann::json::array({p.ftype, p.ftype}));
}

INSTANTIATE_TEST_SUITE_P(
    FileTypes, CliGgufKQuantLlamaQuantize,
    ::testing::Values(SameBytesCase{"demo-lm", "q4_k_m", 15},
                      SameBytesCase{"demo-lm", "q4_k_s", 14}, SameBytesCase{"demo-lm", "q6_k", 18},
                      SameBytesCase{"demo-lm", "q8_0", 7}, SameBytesCase{"llama", "q4_k_m", 15},
                      SameBytesCase{"llama", "q4_k_s", 14}, SameBytesCase{"smollm2", "q4_k_m", 15}),
    [](const auto& info) {
      std::string n = info.param.folder + "_" + info.param.file_type;
      for (char& c : n) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return n;
    });

TEST_F(CliGgufKQuant, BadCombinationsAreErrorsNamingTheFlag) {
  const std::string out = (tmp_ / "x").string();
  EXPECT_NE(
      error_of<ValueError>([&] {
        call(run_export, {demo_folder(), "--format", "onnx", "--quantize", "q4_k_m", "-o", out});
      }).find("--quantize q4_k_m is a llama.cpp GGUF file type: it needs --format gguf"),
      std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              call(run_export, {demo_folder(), "--quantize", "q6_k", "-o", out});
            }).find("format 'native' takes --quantize int8 or int4"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              call(run_export, {demo_folder(), "--format", "gguf", "--quantize", "q4_k_m",
                                "--method", "gptq", "-o", out});
            }).find("--quantize q4_k_m: a llama.cpp file type fixes"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              call(run_export, {demo_folder(), "--format", "gguf", "--quantize", "q4_0",
                                "--group-size", "64", "-o", out});
            }).find("--quantize q4_0 is int4 in groups of 32"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] {
              call(run_export,
                   {demo_folder(), "--format", "onnx", "--kquant-search", "llamacpp", "-o", out});
            }).find("--kquant-search applies to --format gguf"),
            std::string::npos);
  // The JSON config: a file type with another format, or with a key it does not take.
  EXPECT_NE(error_of<ValueError>([] {
              exporters::quantizer_from_json(
                  nlohmann::ordered_json::parse(R"({"scheme": "q4_k_m", "group_size": 64})"),
                  "c.json");
            }).find("scheme 'q4_k_m' is a llama.cpp GGUF file type"),
            std::string::npos);
  const std::string cfg = (tmp_ / "c.json").string();
  std::ofstream(cfg) << R"({"export_format": "onnx", "quantizer": "q4_k_m"})";
  EXPECT_NE(error_of<NotSupportedError>([&] {
              call(run_export, {demo_folder(), "--config", cfg, "-o", out});
            }).find("scheme 'q4_k_m' is a llama.cpp GGUF file type: export with format gguf"),
            std::string::npos);
  // The names the quantizer config knows are the file types the GGUF writer has.
  EXPECT_EQ(exporters::gguf_file_type_schemes(), exporters::gguf_file_type_names());
}

}  // namespace
}  // namespace ingot::cli
