#include "ingot/media/audio_io.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>

#include "ingot/core/error.h"

namespace ingot::media {
namespace {

// The sample encodings accepted: those whose samples are amplitudes libsndfile maps to
// [-1, 1] exactly (PCM, float) or by a fixed table (u-law, A-law).
const char* subtype_name(int format) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8:
      return "8-bit signed PCM";
    case SF_FORMAT_PCM_U8:
      return "8-bit unsigned PCM";
    case SF_FORMAT_PCM_16:
      return "16-bit PCM";
    case SF_FORMAT_PCM_24:
      return "24-bit PCM";
    case SF_FORMAT_PCM_32:
      return "32-bit PCM";
    case SF_FORMAT_FLOAT:
      return "32-bit float";
    case SF_FORMAT_DOUBLE:
      return "64-bit float";
    case SF_FORMAT_ULAW:
      return "u-law";
    case SF_FORMAT_ALAW:
      return "A-law";
    default:
      return nullptr;
  }
}

bool supported_container(int format) {
  switch (format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX:
    case SF_FORMAT_RF64:
    case SF_FORMAT_FLAC:
      return true;
    default:
      return false;
  }
}

// The I0 Bessel function by its power series (converges fast for the small arguments a
// Kaiser window of beta 5 needs).
double bessel_i0(double x) {
  double sum = 1.0, term = 1.0;
  const double q = x * x / 4.0;
  for (int k = 1; k < 200; ++k) {
    term *= q / (double(k) * double(k));
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

}  // namespace

namespace {

// libsndfile's virtual I/O over a byte buffer.
struct MemoryFile {
  const uint8_t* bytes;
  sf_count_t size, pos = 0;
};
sf_count_t mem_length(void* user) {
  return static_cast<MemoryFile*>(user)->size;
}
sf_count_t mem_seek(sf_count_t offset, int whence, void* user) {
  auto* m = static_cast<MemoryFile*>(user);
  sf_count_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
  const sf_count_t to = base + offset;
  if (to < 0 || to > m->size) return -1;
  m->pos = to;
  return m->pos;
}
sf_count_t mem_read(void* ptr, sf_count_t count, void* user) {
  auto* m = static_cast<MemoryFile*>(user);
  const sf_count_t n = std::max<sf_count_t>(0, std::min(count, m->size - m->pos));
  if (n > 0) std::memcpy(ptr, m->bytes + m->pos, size_t(n));
  m->pos += n;
  return n;
}
sf_count_t mem_write(const void*, sf_count_t, void*) {
  return 0;
}
sf_count_t mem_tell(void* user) {
  return static_cast<MemoryFile*>(user)->pos;
}

// The checks and the read shared by both entry points; `file` is open, `info` filled.
Audio read_open(SNDFILE* file, const SF_INFO& info, const std::string& path) {
  INGOT_CHECK(supported_container(info.format), IoError,
              "[audio] '{}' is not a WAV file (libsndfile format 0x{:x}); convert it to WAV", path,
              unsigned(info.format & SF_FORMAT_TYPEMASK));
  const char* subtype = subtype_name(info.format);
  INGOT_CHECK(subtype != nullptr, IoError,
              "[audio] '{}' stores samples in an unsupported format (libsndfile subtype 0x{:x}); "
              "supported: 8/16/24/32-bit PCM, 32/64-bit float, u-law, A-law",
              path, unsigned(info.format & SF_FORMAT_SUBMASK));
  INGOT_CHECK(info.channels > 0 && info.channels <= 1024 && info.samplerate > 0, IoError,
              "[audio] '{}' declares {} channels at {} Hz", path, info.channels, info.samplerate);
  INGOT_CHECK(info.frames > 0, IoError, "[audio] '{}' holds no samples (an empty {} WAV)", path,
              subtype);
  // At most 4 hours at 48 kHz: a header declaring more is corrupt (and would exhaust memory).
  constexpr sf_count_t kMaxSamples = sf_count_t(48000) * 3600 * 4;
  INGOT_CHECK(info.frames <= kMaxSamples / info.channels, IoError,
              "[audio] '{}' declares {} frames of {} channels: too long (more than 4 hours at 48 "
              "kHz) or a corrupt header",
              path, int64_t(info.frames), info.channels);
  Audio out;
  out.sample_rate = info.samplerate;
  out.channels = info.channels;
  out.samples.resize(size_t(info.frames) * size_t(info.channels));
  const sf_count_t got = sf_readf_double(file, out.samples.data(), info.frames);
  INGOT_CHECK(got == info.frames, IoError,
              "[audio] '{}' is truncated: {} of the {} frames its header declares could be read",
              path, int64_t(got), int64_t(info.frames));
  INGOT_CHECK(sf_error(file) == SF_ERR_NO_ERROR, IoError, "[audio] '{}' is malformed: {}", path,
              sf_strerror(file));
  return out;
}

}  // namespace

Audio read_audio(const std::string& path) {
  std::error_code ec;
  INGOT_CHECK(std::filesystem::is_regular_file(path, ec), IoError,
              "[audio] cannot open '{}' (no such file?)", path);
  SF_INFO info{};
  std::unique_ptr<SNDFILE, int (*)(SNDFILE*)> file(sf_open(path.c_str(), SFM_READ, &info),
                                                   &sf_close);
  INGOT_CHECK(file != nullptr, IoError,
              "[audio] '{}' is not a readable WAV file: {} (expected a RIFF/WAVE file)", path,
              sf_strerror(nullptr));
  return read_open(file.get(), info, path);
}

Audio read_audio_bytes(const uint8_t* bytes, size_t size, const std::string& origin) {
  MemoryFile m{bytes, sf_count_t(size)};
  SF_VIRTUAL_IO io{&mem_length, &mem_seek, &mem_read, &mem_write, &mem_tell};
  SF_INFO info{};
  std::unique_ptr<SNDFILE, int (*)(SNDFILE*)> file(sf_open_virtual(&io, SFM_READ, &info, &m),
                                                   &sf_close);
  INGOT_CHECK(file != nullptr, IoError,
              "[audio] '{}' is not a readable WAV file: {} (expected a RIFF/WAVE file)", origin,
              sf_strerror(nullptr));
  return read_open(file.get(), info, origin);
}

std::vector<double> downmix_to_mono(const Audio& audio) {
  INGOT_CHECK(audio.channels > 0, ValueError, "[audio] downmix of audio without channels");
  if (audio.channels == 1) return audio.samples;
  const int64_t n = audio.frames(), c = audio.channels;
  std::vector<double> mono(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t k = 0; k < c; ++k) s += audio.samples[size_t(i * c + k)];
    mono[size_t(i)] = s / double(c);
  }
  return mono;
}

std::vector<double> resample_poly(const std::vector<double>& x, int64_t from_rate,
                                  int64_t to_rate) {
  INGOT_CHECK(from_rate > 0 && to_rate > 0, ValueError,
              "[audio] cannot resample from {} Hz to {} Hz (rates must be positive)", from_rate,
              to_rate);
  const int64_t g = std::gcd(from_rate, to_rate);
  const int64_t up = to_rate / g, down = from_rate / g;
  if (up == 1 && down == 1) return x;
  // The filter h[0 .. 2 half] (scipy's firwin(2 half + 1, 1 / max_rate, ('kaiser', 5))).
  const int64_t max_rate = std::max(up, down), half = 10 * max_rate, taps = 2 * half + 1;
  const double cutoff = 1.0 / double(max_rate), beta = 5.0, i0_beta = bessel_i0(beta);
  std::vector<double> h(static_cast<size_t>(taps));
  double dc = 0.0;
  for (int64_t i = 0; i < taps; ++i) {
    const double m = double(i - half), arg = cutoff * m;
    const double sinc = arg == 0.0 ? 1.0 : std::sin(M_PI * arg) / (M_PI * arg);
    const double r = 2.0 * double(i) / double(taps - 1) - 1.0;
    const double window = bessel_i0(beta * std::sqrt(std::max(0.0, 1.0 - r * r))) / i0_beta;
    h[size_t(i)] = cutoff * sinc * window;
    dc += h[size_t(i)];
  }
  for (double& v : h) v = v / dc * double(up);
  // y[m] = sum_n x[n] h[m down + half - n up] over the taps inside the filter.
  const int64_t n_in = int64_t(x.size());
  const int64_t n_out = (n_in * up + down - 1) / down;
  std::vector<double> y(static_cast<size_t>(n_out));
  for (int64_t m = 0; m < n_out; ++m) {
    const int64_t centre = m * down + half;  // the tap index for n = 0
    // n with 0 <= centre - n up <= taps - 1.
    int64_t lo = centre - (taps - 1) <= 0 ? 0 : (centre - (taps - 1) + up - 1) / up;
    int64_t hi = std::min(centre / up, n_in - 1);
    double s = 0.0;
    for (int64_t n = lo; n <= hi; ++n) s += x[size_t(n)] * h[size_t(centre - n * up)];
    y[size_t(m)] = s;
  }
  return y;
}

}  // namespace ingot::media
