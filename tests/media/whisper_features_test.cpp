// ingot's Whisper audio front end == the references of tools/reference/make_whisper_fixtures.py:
//   - libsndfile's reading of 16-bit PCM and float32 WAVs (scipy.io.wavfile wrote them);
//   - resample_poly == scipy.signal.resample_poly (8 -> 16 kHz and 22.05 -> 16 kHz), 1e-6;
//   - the slaney mel filter bank == transformers' mel_filter_bank, 1e-7;
//   - log-mel features == transformers 5.23's WhisperFeatureExtractor (its torch.stft
//     float32 path) within 1e-4 (measured below ~1e-5): the real 80-mel, 30 s setting on
//     all 3000 frames, truncation, and the tiny model's 16-mel, 1 s setting from its
//     preprocessor_config.json, through downmix and resampling;
//   - errors naming the file (missing, not audio, truncated, empty, unsupported encoding).
#include "ingot/media/whisper_features.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../ops/op_test_util.h"
#include "error_of.h"
#include "ingot/core/error.h"
#include "ingot/formats/npy.h"
#include "ingot/media/audio_io.h"
#include "ingot/ops/functional.h"
#include "models/fixture_path.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using ingot::testing::fixture_path;
using ingot::testing::max_abs_diff;
using ingot::testing::values;

std::string wfix(const std::string& f) {
  return fixture_path("whisper/" + f);
}

constexpr double kFeatureTolerance = 1e-4;

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// features [1, mels, 3000] against the fixture's first `head` frames and its tail column
// (which every later frame equals).
double diff_head_tail(const Tensor& f, const std::string& name) {
  const Tensor head = formats::load_npy(wfix(name + "_head.npy"));
  const Tensor tail = formats::load_npy(wfix(name + "_tail.npy"));  // [1, mels]
  const int64_t h = head.size(2), frames = f.size(2);
  double m = max_abs_diff(slice(f, 2, 0, h), head);
  Tensor rest = slice(f, 2, h, frames);
  m = std::max(m, max_abs_diff(rest, contiguous(expand(unsqueeze(tail, 2),
                                                       {1, f.sym_size(1), SymInt(frames - h)}))));
  return m;
}

TEST(WhisperAudio, ReadsPcm16AndFloatWavs) {
  const Audio a = read_audio(wfix("speech16k.wav"));
  EXPECT_EQ(a.sample_rate, 16000);
  EXPECT_EQ(a.channels, 1);
  EXPECT_EQ(a.frames(), 9600);
  const Audio s = read_audio(wfix("stereo8k.wav"));
  EXPECT_EQ(s.sample_rate, 8000);
  EXPECT_EQ(s.channels, 2);
  EXPECT_EQ(s.frames(), 4000);
  // The channels differ (right = half another signal), so the downmix is their mean.
  const std::vector<double> mono = downmix_to_mono(s);
  ASSERT_EQ(mono.size(), 4000u);
  EXPECT_NE(s.samples[200], s.samples[201]);
  EXPECT_DOUBLE_EQ(mono[100], (s.samples[200] + s.samples[201]) / 2);
}

TEST(WhisperAudio, ReadsFromMemoryAsFromFile) {
  std::ifstream f(wfix("stereo8k.wav"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), {});
  const Audio m =
      read_audio_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "mem");
  const Audio a = read_audio(wfix("stereo8k.wav"));
  EXPECT_EQ(m.sample_rate, a.sample_rate);
  EXPECT_EQ(m.channels, a.channels);
  EXPECT_EQ(m.samples, a.samples);
  // A header cut short is an error naming the origin.
  try {
    read_audio_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), 30, "cut.wav");
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.wav"), std::string::npos) << e.what();
  }
}

TEST(WhisperAudio, ResamplePolyEqualsScipy) {
  const Audio s = read_audio(wfix("stereo8k.wav"));
  const std::vector<double> up = resample_poly(downmix_to_mono(s), 8000, 16000);
  EXPECT_EQ(up.size(), 8000u);
  EXPECT_LE(max_diff(up, values(formats::load_npy(wfix("waveform_stereo8k.npy")))), 1e-6);
  const Audio m = read_audio(wfix("mono22k.wav"));
  EXPECT_EQ(m.sample_rate, 22050);
  const std::vector<double> down = resample_poly(downmix_to_mono(m), 22050, 16000);
  EXPECT_EQ(down.size(), size_t((m.frames() * 320 + 440) / 441));
  EXPECT_LE(max_diff(down, values(formats::load_npy(wfix("waveform_mono22k.npy")))), 1e-6);
  // The same rate is the identity; a zero rate is an error.
  EXPECT_EQ(resample_poly(down, 16000, 16000), down);
  EXPECT_THROW(resample_poly(down, 0, 16000), ValueError);
}

TEST(WhisperFeatures, MelFilterBankEqualsTransformers) {
  for (int64_t mels : {80, 16}) {
    const std::vector<double> f = mel_filter_bank(201, mels, 0.0, 8000.0, 16000);
    EXPECT_LE(
        max_diff(f,
                 values(formats::load_npy(wfix("mel_filters_" + std::to_string(mels) + ".npy")))),
        1e-7)
        << mels;
  }
}

TEST(WhisperFeatures, EightyMelThirtySecondsEqualsTransformers) {
  const WhisperFeatureExtractor fe;  // transformers' defaults: 80 mels, 30 s, 3000 frames
  Tensor f = fe.preprocess_file(wfix("speech16k.wav"));
  ASSERT_EQ(f.sizes(), (IntShape{1, 80, 3000}));
  const double d = diff_head_tail(f, "features80");
  EXPECT_LE(d, kFeatureTolerance);
  std::cout << "80-mel features max |diff| vs transformers: " << d << "\n";
  // Resampled 22.05 kHz input.
  EXPECT_LE(diff_head_tail(fe.preprocess_file(wfix("mono22k.wav")), "features80_22k"),
            kFeatureTolerance);
}

TEST(WhisperFeatures, TruncatesToNSamples) {
  WhisperFeatureExtractor fe;
  fe.n_samples = 4800;  // 0.3 s of the 0.6 s clip (transformers' max_length=4800)
  Tensor f = fe.preprocess_file(wfix("speech16k.wav"));
  ASSERT_EQ(f.sizes(), (IntShape{1, 80, 30}));
  EXPECT_LE(max_abs_diff(f, formats::load_npy(wfix("features_trunc.npy"))), kFeatureTolerance);
}

TEST(WhisperFeatures, TinyModelConfigFromFolder) {
  const WhisperFeatureExtractor fe = WhisperFeatureExtractor::from_folder(wfix("whisper"));
  EXPECT_EQ(fe.feature_size, 16);
  EXPECT_EQ(fe.chunk_length, 1);
  EXPECT_EQ(fe.frames(), 100);
  EXPECT_LE(max_abs_diff(fe.preprocess_file(wfix("speech16k.wav")),
                         formats::load_npy(wfix("whisper/input_features.npy"))),
            kFeatureTolerance);
  // Stereo float32 at 8 kHz: downmixed, resampled, then the same features.
  EXPECT_LE(max_abs_diff(fe.preprocess_file(wfix("stereo8k.wav")),
                         formats::load_npy(wfix("whisper/input_features_8k.npy"))),
            kFeatureTolerance);
}

using ingot::testing::error_of;

// A WAV header + `data` bytes: format tag, channels, rate, bits per sample.
std::string wav_bytes(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits,
                      const std::string& data, uint32_t declared_data = 0xFFFFFFFF) {
  auto u16 = [](uint16_t v) { return std::string{char(v & 0xFF), char(v >> 8)}; };
  auto u32 = [](uint32_t v) {
    return std::string{char(v & 0xFF), char((v >> 8) & 0xFF), char((v >> 16) & 0xFF),
                       char(v >> 24)};
  };
  const uint16_t align = uint16_t(channels * std::max<uint16_t>(bits / 8, 1));
  std::string fmt =
      u16(tag) + u16(channels) + u32(rate) + u32(rate * align) + u16(align) + u16(bits);
  const uint32_t n = declared_data == 0xFFFFFFFF ? uint32_t(data.size()) : declared_data;
  std::string body =
      "WAVE" + std::string("fmt ") + u32(uint32_t(fmt.size())) + fmt + "data" + u32(n) + data;
  return "RIFF" + u32(uint32_t(body.size())) + body;
}

TEST(WhisperAudio, ErrorsNameTheFile) {
  const fs::path tmp = fs::temp_directory_path() / ("ingot_wav_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  auto write = [&](const std::string& name, const std::string& bytes) {
    const std::string p = (tmp / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  };
  const std::string missing = (tmp / "none.wav").string();
  std::string e = error_of<IoError>([&] { read_audio(missing); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;

  const std::string text = write("text.wav", "this is not audio at all, just some text bytes");
  e = error_of<IoError>([&] { read_audio(text); });
  EXPECT_NE(e.find(text), std::string::npos) << e;
  EXPECT_NE(e.find("not a readable WAV"), std::string::npos) << e;

  const std::string empty = write("empty.wav", wav_bytes(1, 1, 16000, 16, ""));
  e = error_of<IoError>([&] { read_audio(empty); });
  EXPECT_NE(e.find(empty), std::string::npos) << e;
  EXPECT_NE(e.find("no samples"), std::string::npos) << e;

  // A header promising 1000 samples with 10 present: libsndfile reads what is there, or
  // reports the file truncated; either way the error (or the short read) names the file.
  std::string pcm(20, '\x01');
  const std::string trunc = write("trunc.wav", wav_bytes(1, 1, 16000, 16, pcm, 2000));
  try {
    const Audio a = read_audio(trunc);
    EXPECT_EQ(a.frames(), 10);  // the frames present, not the header's 1000
  } catch (const IoError& err) {
    EXPECT_NE(std::string(err.what()).find(trunc), std::string::npos) << err.what();
  }

  // GSM 6.10 (format tag 0x31): decodable by libsndfile but not an amplitude encoding
  // this front end takes; or rejected by libsndfile as malformed. Both name the file.
  const std::string gsm = write("gsm.wav", wav_bytes(0x31, 1, 8000, 0, std::string(65, '\0')));
  e = error_of<IoError>([&] { read_audio(gsm); });
  EXPECT_NE(e.find(gsm), std::string::npos) << e;

  // The feature extractor's settings: a folder without preprocessor_config.json.
  e = error_of<IoError>([&] { WhisperFeatureExtractor::from_folder(tmp.string()); });
  EXPECT_NE(e.find("preprocessor_config.json"), std::string::npos) << e;
  EXPECT_NE(e.find("--input input_features"), std::string::npos) << e;
  write("preprocessor_config.json",
        R"({"feature_extractor_type": "WhisperFeatureExtractor", "dither": 0.5})");
  EXPECT_THROW(WhisperFeatureExtractor::from_folder(tmp.string()), NotSupportedError);
  write("preprocessor_config.json", R"({"feature_size": "eighty"})");
  e = error_of<IoError>([&] { WhisperFeatureExtractor::from_folder(tmp.string()); });
  EXPECT_NE(e.find("preprocessor_config.json"), std::string::npos) << e;
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace ingot::media
