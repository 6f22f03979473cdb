// Decoding image files for the vision-language pre-processing: PNG (libpng) and JPEG
// (libjpeg), chosen by the file's signature, to 8-bit interleaved pixels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ingot::media {

// Pixels row by row, `channels` interleaved values per pixel (1 gray, 2 gray + alpha,
// 3 RGB, 4 RGBA), as the file stores them (16-bit samples reduced to 8).
struct Image8 {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;  // height * width * channels
  uint8_t at(int64_t y, int64_t x, int64_t c) const {
    return pixels[size_t((y * width + x) * channels + c)];
  }
};

// IoError naming the file when it is missing, unreadable, not a PNG or JPEG, or
// malformed (with the decoder's message).
Image8 read_image(const std::string& path);

// PIL's Image.convert("RGB"): gray replicated, alpha dropped (not composited).
Image8 to_rgb(const Image8& image);

}  // namespace ingot::media
