// class_map_decode: libspng's SPNG_FMT_PNG output (the samples as stored, no palette expansion, gamma or
// transparency applied), then sub-byte rows unpacked the way PIL's unpackers do.
#include "fastloop/data/codecs/class_map.h"

#include "fastloop/core/errors.h"

#include <spng.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace fastloop {
namespace {

constexpr const char* kAccepted =
    "class maps are read from palette or greyscale PNGs of 8 bits or fewer (PIL's modes \"P\" and \"L\"); save "
    "the mask as one of those, its pixels the class indices";

[[noreturn]] void fail(const std::string& name, const std::string& why) {
  throw InputError("mask " + name + ": " + why);
}

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};

const char* color_type_name(uint8_t color_type) {
  switch (color_type) {
    case SPNG_COLOR_TYPE_TRUECOLOR: return "an RGB PNG";
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: return "an RGBA PNG";
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: return "a greyscale PNG with alpha";
    default: return "a PNG of an unknown colour type";
  }
}

void header_check(const spng_ihdr& ihdr, int64_t max_pixels, const std::string& name) {
  const bool indexed = ihdr.color_type == SPNG_COLOR_TYPE_INDEXED;
  if (!indexed && ihdr.color_type != SPNG_COLOR_TYPE_GRAYSCALE) fail(name, std::string(color_type_name(ihdr.color_type)) + "; " + kAccepted);
  if (ihdr.bit_depth > 8)
    fail(name, "a " + std::to_string(ihdr.bit_depth) + "-bit greyscale PNG; " + kAccepted);
  if (ihdr.width == 0 || ihdr.height == 0) fail(name, "the header gives an empty image");
  if (static_cast<int64_t>(ihdr.width) * ihdr.height > max_pixels)
    fail(name, std::to_string(ihdr.width) + "x" + std::to_string(ihdr.height) + " pixels, more than the " +
                   std::to_string(max_pixels) + " allowed");
}

// Rows of `depth`-bit samples (each row starting on a byte, most significant bits first) to one byte a
// sample: palette indices as they are; grey scaled as PIL's "L;2" (x 0x55) and "L;4" (x 0x11), and "1" as
// numpy reads a mode "1" image (0 or 1).
void unpack_rows(const uint8_t* packed, size_t row_bytes, int depth, bool grey, int64_t height, int64_t width,
                 uint8_t* out) {
  const int mask = (1 << depth) - 1;
  const int scale = !grey || depth == 1 ? 1 : 255 / mask;
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t* row = packed + static_cast<size_t>(y) * row_bytes;
    for (int64_t x = 0; x < width; ++x) {
      const int64_t bit = x * depth;
      const int shift = 8 - depth - static_cast<int>(bit % 8);
      *out++ = static_cast<uint8_t>(((row[bit / 8] >> shift) & mask) * scale);
    }
  }
}

} // namespace

ClassMapSize class_map_decode(std::string_view bytes, const std::string& name, std::vector<uint8_t>& pixels,
                              int64_t max_pixels) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) != 0)
    fail(name, std::string("not a PNG (told by its first bytes); ") + kAccepted);
  std::unique_ptr<spng_ctx, SpngFree> ctx(spng_ctx_new(0));
  if (!ctx) throw std::bad_alloc();
  spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size());
  spng_set_chunk_limits(ctx.get(), size_t{64} << 20, size_t{64} << 20);  // bytes: text/ICC chunks, not pixels
  spng_ihdr ihdr{};
  if (int err = spng_get_ihdr(ctx.get(), &ihdr)) fail(name, std::string("malformed PNG header (") + spng_strerror(err) + ")");
  header_check(ihdr, max_pixels, name);
  const int64_t height = ihdr.height, width = ihdr.width;
  size_t size = 0;
  if (int err = spng_decoded_image_size(ctx.get(), SPNG_FMT_PNG, &size)) fail(name, std::string("PNG: ") + spng_strerror(err));
  const size_t row_bytes = (static_cast<size_t>(width) * ihdr.bit_depth + 7) / 8;
  if (size != row_bytes * static_cast<size_t>(height)) fail(name, "PNG: unexpected decoded size");
  thread_local std::vector<uint8_t> packed;  // sub-byte samples before unpacking
  const bool whole_bytes = ihdr.bit_depth == 8;
  std::vector<uint8_t>& target = whole_bytes ? pixels : packed;
  target.resize(size);
  if (int err = spng_decode_image(ctx.get(), target.data(), size, SPNG_FMT_PNG, 0))
    fail(name, std::string(err == SPNG_EOF || err == SPNG_IO_EOF ? "truncated PNG (" : "corrupt PNG (") +
                   spng_strerror(err) + ")");
  if (!whole_bytes) {
    pixels.resize(static_cast<size_t>(height * width));
    unpack_rows(packed.data(), row_bytes, ihdr.bit_depth, ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE, height, width,
                pixels.data());
  }
  return {height, width};
}

ClassMapSize class_map_read(const std::string& path, std::string& scratch, std::vector<uint8_t>& pixels,
                            int64_t max_pixels) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, std::string("cannot open (") + std::strerror(errno) + "); check that it exists and is readable");
  scratch.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  if (file.bad()) fail(path, "cannot read it");
  return class_map_decode(scratch, path, pixels, max_pixels);
}

} // namespace fastloop
