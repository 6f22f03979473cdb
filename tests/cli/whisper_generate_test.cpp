// `ingot export FOLDER --task generation -o DIR` and `ingot generate` for Whisper (issue
// 18, tools/reference/make_whisper_fixtures.py): greedy ids == transformers' generate for
// all 20 new tokens from --input input_features=FILE.npy and from --audio FILE.wav (16 kHz
// mono 16-bit; 8 kHz stereo float32, downmixed and resampled), for the directory and the
// model folder; the decoder prompt is generation_config.json's; errors naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../models/fixture_path.h"
#include "cli_call.h"
#include "ingot/cli/commands.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"

namespace ingot::cli {
namespace {

namespace fs = std::filesystem;
using cli_testing::call;
using cli_testing::captured;

std::string wf(const std::string& f) {
  return testing::fixture_path("whisper/" + f);
}
std::vector<int64_t> ints(const std::string& file) {
  Tensor t = formats::load_npy(file);
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

class WhisperCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() / ("ingot_whisper_cli_" + std::to_string(::getpid()))).string();
    ASSERT_EQ(call(run_export,
                   {wf("whisper"), "--task", "generation", "--max-cache-len", "32", "-o", dir_}),
              0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static nlohmann::json generate(std::vector<std::string> args) {
    args.insert(args.end(), {"--max-new-tokens", "20", "--json"});
    auto [rc, out] = captured(run_generate, args);
    EXPECT_EQ(rc, 0);
    return nlohmann::json::parse(out);
  }
  std::string dir_;
};

TEST_F(WhisperCli, ExportWritesTheEncoderDecoderPipeline) {
  std::ifstream f(fs::path(dir_) / "manifest.json");
  const nlohmann::json m = nlohmann::json::parse(f);
  EXPECT_EQ(m["architecture"], "WhisperForConditionalGeneration");
  EXPECT_EQ(m["pipeline"]["kind"], "encoder-decoder");
  EXPECT_EQ(m["pipeline"]["encoder_input"], "input_features");
  EXPECT_EQ(m["pipeline"]["decoder_prompt"],
            nlohmann::json(ints(wf("whisper/decoder_input_ids.npy"))));
  for (const char* c : {"encoder", "cross_kv", "decode"})
    ASSERT_TRUE(m["components"].contains(c)) << c;
  EXPECT_TRUE(fs::exists(fs::path(dir_) / "preprocessor_config.json"));
}

TEST_F(WhisperCli, InputAndAudioGiveTransformersGreedyIds) {
  const std::vector<int64_t> expected = ints(wf("whisper/greedy.npy"));
  ASSERT_EQ(expected.size(), 20u);
  for (const std::string& source : {dir_, wf("whisper")}) {
    nlohmann::json by_input =
        generate({source, "--input", "input_features=" + wf("whisper/input_features.npy")});
    EXPECT_EQ(by_input["decoder_prompt_ids"].get<std::vector<int64_t>>(),
              ints(wf("whisper/decoder_input_ids.npy")));
    EXPECT_EQ(by_input["generated_ids"].get<std::vector<int64_t>>(), expected) << source;
    nlohmann::json by_audio = generate({source, "--audio", wf("speech16k.wav")});
    EXPECT_EQ(by_audio["generated_ids"].get<std::vector<int64_t>>(), expected) << source;
    nlohmann::json stereo = generate({source, "--audio", wf("stereo8k.wav")});
    EXPECT_EQ(stereo["generated_ids"].get<std::vector<int64_t>>(),
              ints(wf("whisper/greedy_8k.npy")))
        << source;
  }
}

TEST_F(WhisperCli, DetectsTheLanguageWithoutOne) {
  // generation_config.json without "language": transformers detects it from the audio
  // (prompts.json: <|de|> for this input, so the same prompt and ids as the fixture).
  const fs::path folder = fs::path(dir_) / "no_language";
  fs::create_directories(folder);
  for (const auto& e : fs::directory_iterator(wf("whisper")))
    fs::copy(e.path(), folder / e.path().filename());
  std::ifstream in(folder / "generation_config.json");
  nlohmann::json g = nlohmann::json::parse(in);
  in.close();
  g["language"] = nullptr;
  std::ofstream(folder / "generation_config.json") << g.dump();
  const fs::path exported = fs::path(dir_) / "no_language_gen";
  ASSERT_EQ(call(run_export, {folder.string(), "--task", "generation", "--max-cache-len", "32",
                              "-o", exported.string()}),
            0);
  for (const fs::path& source : {folder, exported}) {
    nlohmann::json out = generate({source.string(), "--audio", wf("speech16k.wav")});
    EXPECT_EQ(out["decoder_prompt_ids"].get<std::vector<int64_t>>(),
              ints(wf("whisper/decoder_input_ids.npy")))
        << source;
    EXPECT_EQ(out["generated_ids"].get<std::vector<int64_t>>(), ints(wf("whisper/greedy.npy")))
        << source;
  }
}

TEST_F(WhisperCli, BadAudioNamesTheFile) {
  const std::string missing = (fs::path(dir_) / "nothing.wav").string();
  try {
    call(run_generate, {dir_, "--audio", missing});
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string not_audio = (fs::path(dir_) / "manifest.json").string();
  try {
    call(run_generate, {dir_, "--audio", not_audio});
    FAIL() << "expected an IoError";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(not_audio), std::string::npos) << e.what();
  }
  // Features of the wrong shape (80 mel bins for a 16-bin model) name input_features.
  const fs::path big = fs::path(dir_) / "big.npy";
  formats::save_npy(big.string(), Tensor::empty({1, 80, 100}, DType::F32, true));
  EXPECT_ANY_THROW(call(run_generate, {dir_, "--input", "input_features=" + big.string()}));
  // --audio for a model that is not a speech model.
  try {
    call(run_generate, {testing::fixture_path("encdec/t5"), "--audio", wf("speech16k.wav")});
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("input_features"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ingot::cli
