// Reading audio files for Whisper's pre-processing (libsndfile): WAV (PCM 8/16/24/32-bit,
// float, double, u-law, A-law; also WAVEX / RF64 and FLAC, which the same library
// decodes), the channels downmixed to mono and the rate converted to the model's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::media {

// Samples frame by frame, `channels` interleaved values per frame, in [-1, 1] as
// libsndfile normalises them (integer PCM divided by 2^(bits-1), float kept as stored).
struct Audio {
  int64_t sample_rate = 0, channels = 0;
  std::vector<double> samples;  // frames * channels
  int64_t frames() const { return channels ? int64_t(samples.size()) / channels : 0; }
};

// IoError naming the file when it is missing, unreadable, not an audio file libsndfile
// knows, truncated, empty or stored in a sample format other than those above.
Audio read_audio(const std::string& path);
// The same from a file's bytes in memory; `origin` names it in errors (the fuzz target
// drives this).
Audio read_audio_bytes(const uint8_t* bytes, size_t size, const std::string& origin);

// The channels averaged frame by frame (what librosa / torchaudio loaders do for
// mono=True): [frames]. A mono input is returned as is.
std::vector<double> downmix_to_mono(const Audio& audio);

// Band-limited rate conversion by the rational factor to_rate / from_rate, equal to
// scipy.signal.resample_poly(x, up, down) with its default window: up / down the rates
// divided by their gcd, a linear-phase low-pass FIR of 2 * 10 * max(up, down) + 1 taps
// (cutoff 1 / max(up, down) of Nyquist, a Kaiser window of beta 5, unit DC gain, times
// up), applied to the zero-stuffed signal with zeros beyond both ends, and the
// ceil(n * up / down) output samples aligned with the input's first sample. The same
// rates return a copy. ValueError for a rate <= 0.
std::vector<double> resample_poly(const std::vector<double>& x, int64_t from_rate, int64_t to_rate);

}  // namespace ingot::media
