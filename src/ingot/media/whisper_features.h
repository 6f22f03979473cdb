// Whisper's audio pre-processing (transformers' WhisperFeatureExtractor) from a model
// folder's preprocessor_config.json:
//
//   audio file -> mono (channels averaged) -> resampled to sampling_rate (resample_poly,
//   audio_io.h) -> float32 waveform -> zero-padded / truncated to n_samples
//   (chunk_length * sampling_rate) -> STFT (n_fft-point frames every hop_length samples,
//   periodic Hann window, centred: reflect-padded by n_fft / 2) -> power |X|^2 ->
//   the slaney mel filter bank -> log10(max(1e-10, .)) -> the last frame dropped ->
//   max(x, max(x) - 8) -> (x + 4) / 4 -> input_features [1, feature_size, n_samples / hop]
//   float32.
//
// The FFT is FFTW's (double precision); transformers computes in float32 (torch.stft).
#pragma once

#include <string>
#include <vector>

#include "ingot/core/tensor.h"

namespace ingot::media {

// The slaney-scale, slaney-normalised triangular filters transformers' mel_filter_bank
// builds (num_frequency_bins rows, num_mel_filters columns, row-major, float64), over
// min_frequency .. max_frequency Hz with FFT bins at linspace(0, sampling_rate // 2).
std::vector<double> mel_filter_bank(int64_t num_frequency_bins, int64_t num_mel_filters,
                                    double min_frequency, double max_frequency,
                                    int64_t sampling_rate);

struct WhisperFeatureExtractor {
  int64_t feature_size = 80;      // mel bins
  int64_t sampling_rate = 16000;  // Hz the model expects
  int64_t hop_length = 160;
  int64_t chunk_length = 30;  // seconds
  int64_t n_fft = 400;
  int64_t n_samples = 480000;  // chunk_length * sampling_rate: the padded length
  double padding_value = 0.0;

  // FOLDER/preprocessor_config.json (IoError naming it when absent or malformed;
  // NotSupportedError for another feature extractor type or dither != 0, which is random).
  static WhisperFeatureExtractor from_folder(const std::string& folder);
  // Frames of input_features: n_samples / hop_length (transformers' nb_max_frames).
  int64_t frames() const { return n_samples / hop_length; }

  // A mono waveform at sampling_rate -> input_features [1, feature_size, frames()] float32.
  // Longer waveforms are truncated, shorter ones padded with padding_value.
  Tensor extract(const std::vector<float>& waveform) const;
  // read_audio + downmix_to_mono + resample_poly to sampling_rate, as float32 (what the
  // processor is given). Errors name the file.
  std::vector<float> load_waveform(const std::string& path) const;
  Tensor preprocess_file(const std::string& path) const { return extract(load_waveform(path)); }

 private:
  mutable std::vector<double> filters_;  // [n_fft / 2 + 1, feature_size], built on first use
};

}  // namespace ingot::media
