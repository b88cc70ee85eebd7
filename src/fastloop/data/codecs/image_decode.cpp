// Image decoding for the loader's workers. Why these libraries and not our own code: libjpeg-turbo is the
// decoder PIL links (same IDCT, same upsampling, so full-scale pixels match PIL's bit for bit) and its DCT
// scaling makes a reduced decode nearly free; libspng is a small, fuzzed PNG decoder with a one-call
// conversion to RGB8. Both are found with pkg-config (CMakeLists.txt). What is hand-written here is only
// PIL's colour conversions that the libraries do differently: Adobe (inverted) CMYK -> RGB with PIL's
// rounding, and 16-bit greyscale, which PIL's convert("RGB") clips to 255 instead of scaling. The other
// formats live in image_{bmp,pnm,webp,tiff}.cpp; this file recognises each by its first bytes.
#include "fastloop/data/codecs/image_decode.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/image_formats.h"
#include "fastloop/data/codecs/jpeg_region.h"

#include <spng.h>
#include <turbojpeg.h>

#include <cstring>
#include <memory>

namespace fastloop {

void image_format::fail(const std::string& name, const std::string& why) {
  throw InputError("image " + name + ": " + why +
                   "; re-encode it (as JPEG or PNG, say), or pass --bad-image-policy skip to skip such files");
}

void image_format::check_size(const ImageInfo& info, int64_t max_pixels, const std::string& name) {
  if (info.width <= 0 || info.height <= 0) fail(name, "the header gives an empty image");
  if (info.width > max_pixels || info.height > max_pixels / info.width)
    fail(name, std::to_string(info.width) + "x" + std::to_string(info.height) + " pixels, more than the " +
                   std::to_string(max_pixels) + " allowed");
}

namespace {

using image_format::fail;
using image_format::muldiv255;

bool is_jpeg(std::string_view b) { return b.size() >= 3 && static_cast<uint8_t>(b[0]) == 0xFF && static_cast<uint8_t>(b[1]) == 0xD8 && static_cast<uint8_t>(b[2]) == 0xFF; }
bool is_png(std::string_view b) { return b.size() >= 8 && std::memcmp(b.data(), "\x89PNG\r\n\x1a\n", 8) == 0; }

// PIL reads every CMYK JPEG as Adobe's inverted CMYK ("CMYK;I") and converts with
// R = (255 - K) - (255 - K) * C / 255; libjpeg-turbo hands out the stored (inverted) values.
void cmyk_inverted_to_rgb(const uint8_t* in, uint8_t* out, int64_t pixels) {
  for (int64_t p = 0; p < pixels; ++p, in += 4, out += 3) {
    const int nk = in[3];  // 255 - K, as stored
    for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(nk - muldiv255(255 - in[c], nk));
  }
}

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using SpngCtx = std::unique_ptr<spng_ctx, SpngFree>;

SpngCtx png_open(std::string_view bytes, int64_t max_pixels, const std::string& name, spng_ihdr& ihdr) {
  SpngCtx ctx(spng_ctx_new(0));
  if (!ctx) throw std::bad_alloc();
  spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size());
  spng_set_chunk_limits(ctx.get(), size_t{64} << 20, size_t{64} << 20);  // bytes: text/ICC chunks, not pixels
  if (int err = spng_get_ihdr(ctx.get(), &ihdr)) fail(name, std::string("malformed PNG header (") + spng_strerror(err) + ")");
  if (static_cast<int64_t>(ihdr.width) * ihdr.height > max_pixels)
    fail(name, "PNG of " + std::to_string(ihdr.width) + "x" + std::to_string(ihdr.height) + " pixels, more than the " +
                   std::to_string(max_pixels) + " allowed");
  return ctx;
}

} // namespace

// Only 1/2, 1/4 and 1/8: libjpeg-turbo has SIMD inverse DCTs for those (and for 1/1); 3/8, 5/8, 3/4 and
// 7/8 run its plain-C scaled IDCTs and decode slower than a full-scale decode does (README, loader table).
ImageScale image_scale_at_least(double min_scale) {
  ImageScale best;  // 1/1
  for (const int denom : {2, 4, 8}) {
    if (1.0 / denom >= min_scale) best = {1, denom};
  }
  return best;
}

ImageDecoder::ImageDecoder(int64_t max_pixels)
    : jpeg_(tjInitDecompress()), region_(std::make_unique<JpegRegionDecoder>()), max_pixels_(max_pixels) {
  if (!jpeg_) throw std::runtime_error(std::string("TurboJPEG could not start: ") + tjGetErrorStr2(nullptr));
}

ImageDecoder::~ImageDecoder() { tjDestroy(jpeg_); }

void ImageDecoder::jpeg_restart() {
  tjhandle fresh = tjInitDecompress();
  if (!fresh) throw std::runtime_error(std::string("TurboJPEG could not start: ") + tjGetErrorStr2(nullptr));
  tjDestroy(jpeg_);
  jpeg_ = fresh;
}

ImageInfo ImageDecoder::info(std::string_view bytes, const std::string& name) {
  ImageInfo out;
  if (is_jpeg(bytes)) {
    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(jpeg_, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), &width,
                            &height, &subsamp, &colorspace) != 0) {
      const std::string why = tjGetErrorStr2(jpeg_);
      jpeg_restart();
      fail(name, "malformed JPEG header (" + why + ")");
    }
    out = {ImageFormat::kJpeg, width, height, colorspace == TJCS_CMYK || colorspace == TJCS_YCCK};
  } else if (is_png(bytes)) {
    spng_ihdr ihdr{};
    png_open(bytes, max_pixels_, name, ihdr);
    out = {ImageFormat::kPng, ihdr.width, ihdr.height};
  } else if (image_format::is_webp(bytes)) {
    out = image_format::webp_info(bytes, name);
  } else if (image_format::is_tiff(bytes)) {
    out = image_format::tiff_info(bytes, name);
  } else if (image_format::is_bmp(bytes)) {
    out = image_format::bmp_info(bytes, name);
  } else if (image_format::is_pnm(bytes)) {
    out = image_format::pnm_info(bytes, name);
  } else {
    fail(name, "not an image fastloop decodes (JPEG, PNG, WebP, BMP, PPM/PGM/PBM or TIFF, told by its first bytes)");
  }
  image_format::check_size(out, max_pixels_, name);
  return out;
}

RgbImage ImageDecoder::decode(std::string_view bytes, const std::string& name, const ImageInfo& header,
                              ImageScale scale) {
  const auto rgb_of = [this](const ImageInfo& got) { return RgbImage{pixels_.data(), got.width, got.height}; };
  switch (header.format) {
    case ImageFormat::kJpeg:
      return jpeg_decode(bytes, name, header, scale);
    case ImageFormat::kPng:
      return png_decode(bytes, name);
    case ImageFormat::kWebp:
      return rgb_of(image_format::webp_decode(bytes, name, max_pixels_, pixels_));
    case ImageFormat::kBmp:
      return rgb_of(image_format::bmp_decode(bytes, name, max_pixels_, pixels_));
    case ImageFormat::kPnm:
      return rgb_of(image_format::pnm_decode(bytes, name, max_pixels_, pixels_));
    case ImageFormat::kTiff:
      return rgb_of(image_format::tiff_decode(bytes, name, max_pixels_, pixels_, staging_));
  }
  fail(name, "unknown image format");
}

RgbImage ImageDecoder::decode_region(std::string_view bytes, const std::string& name, const ImageInfo& header,
                                     ImageScale scale, const PixelRect& region) {
  if (header.format != ImageFormat::kJpeg || header.cmyk || !jpeg_ends_with_eoi(bytes))
    return decode(bytes, name, header, scale);
  PixelRect got;
  std::string why;
  switch (region_->decode(bytes, scale, region, pixels_, got, why)) {
    case JpegRegionStatus::kDone:
      return {pixels_.data(), got.width, got.height, got.top, got.left};
    case JpegRegionStatus::kTruncated:
      fail(name, "truncated JPEG (" + why + ")");
    case JpegRegionStatus::kCorrupt:
      fail(name, "corrupt JPEG (" + why + ")");
  }
  fail(name, "corrupt JPEG");
}

RgbImage ImageDecoder::jpeg_decode(std::string_view bytes, const std::string& name, const ImageInfo& header,
                                   ImageScale scale) {
  const auto* buf = reinterpret_cast<const unsigned char*>(bytes.data());
  const int64_t w = scale.apply(header.width), h = scale.apply(header.height);
  const bool cmyk = header.cmyk;
  std::vector<uint8_t>& target = cmyk ? staging_ : pixels_;
  target.resize(static_cast<size_t>(w * h * (cmyk ? 4 : 3)));
  if (tjDecompress2(jpeg_, buf, bytes.size(), target.data(), static_cast<int>(w), 0, static_cast<int>(h),
                    cmyk ? TJPF_CMYK : TJPF_RGB, TJFLAG_ACCURATEDCT) != 0) {
    const std::string why = tjGetErrorStr2(jpeg_);
    const bool fatal = tjGetErrorCode(jpeg_) == TJERR_FATAL;
    jpeg_restart();
    // Warnings (extraneous bytes, a corrupt segment the decoder recovered from) leave a picture, as in PIL;
    // data that ends early is an error, as PIL's "image file is truncated".
    if (fatal || why.find("Premature end") != std::string::npos)
      fail(name, (why.find("Premature end") != std::string::npos ? "truncated JPEG (" : "corrupt JPEG (") + why + ")");
  }
  if (cmyk) {
    pixels_.resize(static_cast<size_t>(w * h * 3));
    cmyk_inverted_to_rgb(staging_.data(), pixels_.data(), w * h);
  }
  return {pixels_.data(), w, h};
}

RgbImage ImageDecoder::png_decode(std::string_view bytes, const std::string& name) {
  spng_ihdr ihdr{};
  SpngCtx ctx = png_open(bytes, max_pixels_, name, ihdr);
  const int64_t w = ihdr.width, h = ihdr.height;
  // 16-bit greyscale: PIL's mode I;16, whose convert("RGB") clips each value to 255.
  const bool gray16 = ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && ihdr.bit_depth == 16;
  const int fmt = gray16 ? SPNG_FMT_PNG : SPNG_FMT_RGB8;
  size_t size = 0;
  if (int err = spng_decoded_image_size(ctx.get(), fmt, &size)) fail(name, std::string("PNG: ") + spng_strerror(err));
  std::vector<uint8_t>& target = gray16 ? staging_ : pixels_;
  target.resize(size);
  if (int err = spng_decode_image(ctx.get(), target.data(), size, fmt, 0))
    fail(name, std::string(err == SPNG_EOF || err == SPNG_IO_EOF ? "truncated PNG (" : "corrupt PNG (") + spng_strerror(err) + ")");
  if (gray16) {
    pixels_.resize(static_cast<size_t>(w * h * 3));
    const auto* in = reinterpret_cast<const uint16_t*>(staging_.data());
    for (int64_t p = 0; p < w * h; ++p) {
      const auto v = static_cast<uint8_t>(in[p] > 255 ? 255 : in[p]);
      pixels_[static_cast<size_t>(3 * p)] = pixels_[static_cast<size_t>(3 * p + 1)] = pixels_[static_cast<size_t>(3 * p + 2)] = v;
    }
  }
  return {pixels_.data(), w, h};
}

} // namespace fastloop
