#include "ingot/media/image_io.h"

#include <jpeglib.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <fstream>
#include <memory>

#include "ingot/core/error.h"

namespace ingot::media {
namespace {

Image8 read_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    INGOT_THROW(IoError, "[image] '{}' is not a readable PNG: {}", path, image.message);
  }
  // Keep gray / color and alpha as stored; 8-bit samples, palettes expanded.
  image.format &= PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA;
  Image8 out;
  out.height = image.height;
  out.width = image.width;
  out.channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    const std::string message = image.message;
    png_image_free(&image);
    INGOT_THROW(IoError, "[image] '{}' is a malformed PNG: {}", path, message);
  }
  return out;
}

// libjpeg reports errors through error_exit, which must not return: jump back.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

Image8 read_jpeg(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  INGOT_CHECK(file != nullptr, IoError, "[image] cannot open '{}'", path);
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  Image8 out;  // before setjmp: nothing with a destructor is created between the jumps
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    INGOT_THROW(IoError, "[image] '{}' is a malformed JPEG: {}", path, err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_stdio_src(&cinfo, file.get());
  jpeg_read_header(&cinfo, TRUE);
  // libjpeg's defaults (islow IDCT, fancy upsampling) are PIL's.
  if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.height = cinfo.output_height;
  out.width = cinfo.output_width;
  out.channels = cinfo.output_components;
  out.pixels.resize(size_t(out.height * out.width * out.channels));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row =
        out.pixels.data() + size_t(cinfo.output_scanline) * size_t(out.width * out.channels);
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}

}  // namespace

Image8 read_image(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  INGOT_CHECK(f.good(), IoError, "[image] cannot open '{}' (no such file?)", path);
  unsigned char magic[8] = {};
  f.read(reinterpret_cast<char*>(magic), 8);
  const std::streamsize got = f.gcount();
  f.close();
  if (got >= 8 && png_sig_cmp(magic, 0, 8) == 0) return read_png(path);
  if (got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) return read_jpeg(path);
  INGOT_THROW(IoError, "[image] '{}' is neither a PNG nor a JPEG file (by its first bytes)", path);
}

Image8 to_rgb(const Image8& in) {
  if (in.channels == 3) return in;
  INGOT_CHECK(in.channels >= 1 && in.channels <= 4, ValueError,
              "[image] an image of {} channels cannot be converted to RGB", in.channels);
  Image8 out{in.height, in.width, 3, std::vector<uint8_t>(size_t(in.height * in.width * 3))};
  const bool gray = in.channels <= 2;
  for (int64_t i = 0; i < in.height * in.width; ++i) {
    for (int64_t c = 0; c < 3; ++c) {
      out.pixels[size_t(i * 3 + c)] = in.pixels[size_t(i * in.channels + (gray ? 0 : c))];
    }
  }
  return out;
}

}  // namespace ingot::media
