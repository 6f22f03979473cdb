#include "ingot/media/whisper_features.h"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "ingot/core/error.h"
#include "ingot/media/audio_io.h"
#include "ingot/media/auto_processor.h"

namespace ingot::media {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The slaney mel scale (librosa's default): linear below 1 kHz, logarithmic above.
constexpr double kMinLogHertz = 1000.0, kMinLogMel = 15.0;
const double kLogStep = 27.0 / std::log(6.4);

double hertz_to_mel(double f) {
  return f >= kMinLogHertz ? kMinLogMel + std::log(f / kMinLogHertz) * kLogStep : 3.0 * f / 200.0;
}
double mel_to_hertz(double m) {
  return m >= kMinLogMel ? kMinLogHertz * std::exp(std::log(6.4) / 27.0 * (m - kMinLogMel))
                         : 200.0 * m / 3.0;
}

// numpy.linspace(start, stop, num)[i]: start + i * step, the last point exactly stop.
double linspace(double start, double stop, int64_t num, int64_t i) {
  if (num == 1) return start;
  if (i == num - 1) return stop;
  return start + double(i) * ((stop - start) / double(num - 1));
}

// FFTW's planner is not thread-safe; plans are made and destroyed under this lock.
std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::vector<double> mel_filter_bank(int64_t bins, int64_t mels, double min_frequency,
                                    double max_frequency, int64_t sampling_rate) {
  INGOT_CHECK(bins >= 2 && mels >= 1 && min_frequency <= max_frequency, ValueError,
              "[whisper features] mel filter bank of {} bins, {} filters over {} .. {} Hz", bins,
              mels, min_frequency, max_frequency);
  const double mel_min = hertz_to_mel(min_frequency), mel_max = hertz_to_mel(max_frequency);
  std::vector<double> centres(
      static_cast<size_t>(mels + 2));  // the filters' corner frequencies in Hz
  for (int64_t i = 0; i < mels + 2; ++i)
    centres[size_t(i)] = mel_to_hertz(linspace(mel_min, mel_max, mels + 2, i));
  std::vector<double> out(static_cast<size_t>(bins * mels));
  for (int64_t f = 0; f < bins; ++f) {
    const double hz = linspace(0.0, double(sampling_rate / 2), bins, f);
    for (int64_t m = 0; m < mels; ++m) {
      const double down =
          -(centres[size_t(m)] - hz) / (centres[size_t(m + 1)] - centres[size_t(m)]);
      const double up =
          (centres[size_t(m + 2)] - hz) / (centres[size_t(m + 2)] - centres[size_t(m + 1)]);
      const double tri = std::max(0.0, std::min(down, up));
      // Slaney normalisation: about constant energy per filter.
      out[size_t(f * mels + m)] = tri * (2.0 / (centres[size_t(m + 2)] - centres[size_t(m)]));
    }
  }
  return out;
}

WhisperFeatureExtractor WhisperFeatureExtractor::from_folder(const std::string& folder) {
  const fs::path p = fs::path(folder) / "preprocessor_config.json";
  INGOT_CHECK(fs::exists(p), IoError,
              "[whisper features] '{}' has no preprocessor_config.json (the feature extractor's "
              "settings); pass preprocessed features with --input input_features=FILE.npy",
              folder);
  std::ifstream f(p);
  WhisperFeatureExtractor e;
  try {
    const json j = json::parse(f);
    const std::string type = j.value("feature_extractor_type", "WhisperFeatureExtractor");
    INGOT_CHECK(type == "WhisperFeatureExtractor", NotSupportedError,
                "[whisper features] '{}': feature_extractor_type '{}' is not supported "
                "(supported: WhisperFeatureExtractor)",
                p.string(), type);
    e.feature_size = j.value("feature_size", e.feature_size);
    e.sampling_rate = j.value("sampling_rate", e.sampling_rate);
    e.hop_length = j.value("hop_length", e.hop_length);
    e.chunk_length = j.value("chunk_length", e.chunk_length);
    e.n_fft = j.value("n_fft", e.n_fft);
    e.padding_value = j.value("padding_value", e.padding_value);
    e.n_samples = j.value("n_samples", e.chunk_length * e.sampling_rate);
    const double dither = j.value("dither", 0.0);
    INGOT_CHECK(dither == 0.0, NotSupportedError,
                "[whisper features] '{}': dither {} adds random noise; only dither 0 is "
                "supported (set it to 0.0)",
                p.string(), dither);
  } catch (const json::exception& ex) {
    INGOT_THROW(IoError, "[whisper features] '{}' is malformed: {}", p.string(), ex.what());
  }
  INGOT_CHECK(e.feature_size > 0 && e.sampling_rate > 0 && e.hop_length > 0 && e.n_fft > 1 &&
                  e.n_samples > e.n_fft / 2,
              IoError,
              "[whisper features] '{}': feature_size {}, sampling_rate {}, hop_length {}, n_fft "
              "{}, n_samples {} must be positive (n_samples > n_fft / 2)",
              p.string(), e.feature_size, e.sampling_rate, e.hop_length, e.n_fft, e.n_samples);
  return e;
}

std::vector<float> WhisperFeatureExtractor::load_waveform(const std::string& path) const {
  const Audio audio = read_audio(path);
  std::vector<double> mono = downmix_to_mono(audio);
  if (audio.sample_rate != sampling_rate)
    mono = resample_poly(mono, audio.sample_rate, sampling_rate);
  return std::vector<float>(mono.begin(), mono.end());
}

Tensor WhisperFeatureExtractor::extract(const std::vector<float>& waveform) const {
  const int64_t bins = n_fft / 2 + 1, mels = feature_size, frames = this->frames();
  INGOT_CHECK(n_samples > n_fft / 2, ValueError,
              "[whisper features] n_samples {} must exceed n_fft / 2 = {} (reflect padding)",
              n_samples, n_fft / 2);
  if (filters_.empty()) filters_ = mel_filter_bank(bins, mels, 0.0, 8000.0, sampling_rate);
  // Padded / truncated to n_samples, then reflect-padded by n_fft / 2 on both sides.
  std::vector<double> x(size_t(n_samples), padding_value);
  std::copy_n(waveform.begin(), std::min<int64_t>(int64_t(waveform.size()), n_samples), x.begin());
  const int64_t pad = n_fft / 2;
  auto sample = [&](int64_t i) {  // index into the reflect-padded signal
    int64_t j = i - pad;
    if (j < 0) j = -j;
    if (j >= n_samples) j = 2 * (n_samples - 1) - j;
    return x[size_t(j)];
  };
  std::vector<double> window(static_cast<size_t>(n_fft));  // periodic Hann (torch.hann_window)
  for (int64_t i = 0; i < n_fft; ++i)
    window[size_t(i)] = 0.5 - 0.5 * std::cos(2.0 * M_PI * double(i) / double(n_fft));

  double* in = fftw_alloc_real(size_t(n_fft));
  fftw_complex* spec = fftw_alloc_complex(size_t(bins));
  fftw_plan plan;
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    plan = fftw_plan_dft_r2c_1d(int(n_fft), in, spec, FFTW_ESTIMATE);
  }
  // log10 mel energies [mels, frames] (the STFT's last frame is dropped, as transformers).
  std::vector<double> logmel(static_cast<size_t>(mels * frames));
  std::vector<double> power(static_cast<size_t>(bins));
  for (int64_t t = 0; t < frames; ++t) {
    for (int64_t i = 0; i < n_fft; ++i) in[i] = sample(t * hop_length + i) * window[size_t(i)];
    fftw_execute(plan);
    for (int64_t k = 0; k < bins; ++k)
      power[size_t(k)] = spec[k][0] * spec[k][0] + spec[k][1] * spec[k][1];
    for (int64_t m = 0; m < mels; ++m) {
      double e = 0.0;
      for (int64_t k = 0; k < bins; ++k) e += filters_[size_t(k * mels + m)] * power[size_t(k)];
      logmel[size_t(m * frames + t)] = std::log10(std::max(e, 1e-10));
    }
  }
  {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_destroy_plan(plan);
  }
  fftw_free(in);
  fftw_free(spec);
  const double top = *std::max_element(logmel.begin(), logmel.end());
  std::vector<float> out(logmel.size());
  for (size_t i = 0; i < logmel.size(); ++i)
    out[i] = float((std::max(logmel[i], top - 8.0) + 4.0) / 4.0);
  return Tensor::from_vector(out, {1, mels, frames});
}

namespace {

class WhisperProcessor final : public Processor {
 public:
  explicit WhisperProcessor(const std::string& folder)
      : features_(WhisperFeatureExtractor::from_folder(folder)) {}
  std::string type() const override { return "WhisperFeatureExtractor"; }
  Tensor audio(const std::string& file) const override { return features_.preprocess_file(file); }

 private:
  WhisperFeatureExtractor features_;
};

std::unique_ptr<Processor> make_whisper(const std::string& folder) {
  return std::make_unique<WhisperProcessor>(folder);
}
INGOT_REGISTER_PROCESSOR(whisper, make_whisper, "WhisperFeatureExtractor", "WhisperProcessor");

}  // namespace

}  // namespace ingot::media
