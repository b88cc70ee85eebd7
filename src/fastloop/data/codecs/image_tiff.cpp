// TIFF decoding of the first image of a file: libtiff (Debian's libtiff-dev, the library PIL links)
// decompresses strips or tiles, then the samples become RGB by PIL's rules for its modes — "1", "L",
// "I;16" (clipped at 255), "LA", "RGB"/"RGBA"/"RGBa", 16-bit RGB (the high byte), "P" (colormap >> 8) and
// "CMYK" — and YCbCr through libtiff's RGBA reader, as PIL does. Other layouts are refused by name.
#include "fastloop/data/codecs/image_formats.h"

#include <tiffio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

namespace fastloop {
namespace image_format {
namespace {

[[noreturn]] void tiff_fail(const std::string& name, const std::string& why) { fail(name, "TIFF: " + why); }

// The file in memory, as libtiff's client procedures see it, and the first error libtiff reported.
struct TiffSource {
  std::string_view bytes;
  uint64_t pos = 0;
  std::string error;
};

tmsize_t source_read(thandle_t h, void* buf, tmsize_t n) {
  auto* s = static_cast<TiffSource*>(h);
  const uint64_t left = s->pos < s->bytes.size() ? s->bytes.size() - s->pos : 0;
  const uint64_t k = std::min<uint64_t>(left, static_cast<uint64_t>(n));
  if (k) std::memcpy(buf, s->bytes.data() + s->pos, k);
  s->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t source_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t source_seek(thandle_t h, toff_t off, int whence) {
  auto* s = static_cast<TiffSource*>(h);
  const uint64_t base = whence == SEEK_CUR ? s->pos : whence == SEEK_END ? s->bytes.size() : 0;
  s->pos = base + off;
  return s->pos;
}
int source_close(thandle_t) { return 0; }
toff_t source_size(thandle_t h) { return static_cast<TiffSource*>(h)->bytes.size(); }
int no_map(thandle_t, void**, toff_t*) { return 0; }
void no_unmap(thandle_t, void*, toff_t) {}

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list args) {
  auto* s = static_cast<TiffSource*>(user);
  if (s->error.empty()) {
    char text[256];
    std::vsnprintf(text, sizeof(text), fmt, args);
    s->error = std::string(module ? module : "libtiff") + ": " + text;
  }
  return 1;  // handled: nothing reaches libtiff's global (stderr) handler
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffClose {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffClose>;

TiffPtr tiff_open(TiffSource& source, const std::string& name, int64_t max_alloc) {
  std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> options(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree);
  if (!options) throw std::bad_alloc();
  TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), static_cast<tmsize_t>(max_alloc));
  TIFFOpenOptionsSetErrorHandlerExtR(options.get(), on_error, &source);
  TIFFOpenOptionsSetWarningHandlerExtR(options.get(), on_warning, &source);
  TiffPtr tif(TIFFClientOpenExt(name.c_str(), "rm", &source, source_read, source_write, source_seek, source_close,
                                source_size, no_map, no_unmap, options.get()));
  if (!tif) tiff_fail(name, "malformed file (" + (source.error.empty() ? "libtiff could not open it" : source.error) + ")");
  return tif;
}

// What PIL's OPEN_INFO table calls the first image, reduced to how its samples become RGB.
enum class TiffKind { kGrey, kGreyAlpha, kRgb, kPalette, kCmyk, kYcbcrRgba };

struct TiffLayout {
  TiffKind kind = TiffKind::kGrey;
  int64_t width = 0, height = 0;
  uint16_t bits = 8, samples = 1, photometric = 0, planar = PLANARCONFIG_CONTIG;
  bool invert = false;        // min-is-white
  bool premultiplied = false; // associated alpha ("RGBa")
};

uint16_t field16(TIFF* tif, ttag_t tag) {
  uint16_t v = 0;
  TIFFGetFieldDefaulted(tif, tag, &v);
  return v;
}

TiffLayout tiff_layout(TIFF* tif, const std::string& name) {
  TiffLayout l;
  uint32_t w = 0, h = 0;
  if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h)) tiff_fail(name, "no image size");
  l.width = w, l.height = h;
  l.bits = field16(tif, TIFFTAG_BITSPERSAMPLE), l.samples = field16(tif, TIFFTAG_SAMPLESPERPIXEL);
  l.planar = field16(tif, TIFFTAG_PLANARCONFIG);
  TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &l.photometric);
  const uint16_t format = field16(tif, TIFFTAG_SAMPLEFORMAT), compression = field16(tif, TIFFTAG_COMPRESSION);
  uint16_t n_extra = 0;
  uint16_t* extra = nullptr;
  TIFFGetFieldDefaulted(tif, TIFFTAG_EXTRASAMPLES, &n_extra, &extra);
  const auto extras_are = [&](int colours) {  // the extra samples after `colours` ones, as PIL accepts them
    if (n_extra != l.samples - colours) return n_extra == 0 && l.samples == colours + 1;  // "RGBA" without the tag
    for (int i = 1; i < n_extra; ++i) if (extra[i] != 0) return false;
    return n_extra == 0 || extra[0] <= 2 || (extra[0] == 999 && n_extra == 1);
  };
  const std::string what = std::to_string(l.samples) + " samples of " + std::to_string(l.bits) + " bits, photometric " +
                           std::to_string(l.photometric);
  if (format == SAMPLEFORMAT_IEEEFP)
    tiff_fail(name, "floating-point samples (" + what + "); fastloop reads 8/16-bit integer TIFFs: convert it to 8-bit");
  if (format != SAMPLEFORMAT_UINT) tiff_fail(name, "signed or complex samples (" + what + ") are not supported");
  bool ok = false;
  switch (l.photometric) {
    case PHOTOMETRIC_MINISWHITE: case PHOTOMETRIC_MINISBLACK:
      l.invert = l.photometric == PHOTOMETRIC_MINISWHITE && l.bits != 16;  // PIL's I;16 ignores min-is-white
      ok = l.samples == 1 && (l.bits == 1 || l.bits == 8 || l.bits == 16);
      if (l.samples == 2 && l.bits == 8 && l.photometric == PHOTOMETRIC_MINISBLACK && n_extra == 1 && extra[0] == 2)
        ok = true, l.kind = TiffKind::kGreyAlpha;
      break;
    case PHOTOMETRIC_RGB:
      l.kind = TiffKind::kRgb;
      ok = l.samples >= 3 && l.samples <= (l.bits == 8 ? 6 : 4) && (l.bits == 8 || l.bits == 16) && extras_are(3);
      l.premultiplied = n_extra && extra[0] == EXTRASAMPLE_ASSOCALPHA;
      ok = ok && !(l.premultiplied && l.bits == 16);
      break;
    case PHOTOMETRIC_PALETTE:
      l.kind = TiffKind::kPalette;
      ok = l.samples == 1 && (l.bits == 1 || l.bits == 2 || l.bits == 4 || l.bits == 8);
      break;
    case PHOTOMETRIC_SEPARATED:
      l.kind = TiffKind::kCmyk;
      ok = l.bits == 8 && l.samples >= 4 && l.samples <= 6 && field16(tif, TIFFTAG_INKSET) == INKSET_CMYK && extras_are(4);
      break;
    case PHOTOMETRIC_YCBCR:
      ok = l.bits == 8 && l.samples == 3;
      if (compression == COMPRESSION_JPEG && l.planar == PLANARCONFIG_CONTIG) {  // libjpeg converts, as in PIL
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        l.kind = TiffKind::kRgb, l.photometric = PHOTOMETRIC_RGB;
      } else {
        l.kind = TiffKind::kYcbcrRgba;
      }
      break;
    default:
      break;
  }
  if (!ok) tiff_fail(name, "unsupported layout (" + what + "); convert it to 8-bit RGB or greyscale");
  return l;
}

// The first image's samples as libtiff decodes them: per plane (1, or `samples` when planar), `height`
// rows of row_bytes each, from strips or tiles.
void tiff_read_samples(TIFF* tif, const TiffLayout& l, TiffSource& source, const std::string& name, int64_t max_alloc,
                       std::vector<uint8_t>& raw, int64_t& row_bytes) {
  const int planes = l.planar == PLANARCONFIG_SEPARATE ? l.samples : 1;
  const int64_t pixel_bits = static_cast<int64_t>(l.bits) * (planes == 1 ? l.samples : 1);
  row_bytes = (l.width * pixel_bits + 7) / 8;
  raw.resize(static_cast<size_t>(planes * l.height * row_bytes));
  const auto broken = [&](const char* what) {
    tiff_fail(name, std::string(what) + " (" + (source.error.empty() ? "corrupt or truncated" : source.error) + ")");
  };
  if (!TIFFIsTiled(tif)) {
    uint32_t rps = 0;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps);
    const int64_t rows = rps == 0 || rps > l.height ? l.height : rps;
    for (int p = 0; p < planes; ++p) {
      for (int64_t y = 0; y < l.height; y += rows) {
        const int64_t n = std::min(rows, l.height - y);
        uint8_t* dst = raw.data() + (p * l.height + y) * row_bytes;
        const tmsize_t got = TIFFReadEncodedStrip(tif, TIFFComputeStrip(tif, static_cast<uint32_t>(y), static_cast<uint16_t>(p)),
                                                  dst, static_cast<tmsize_t>(n * row_bytes));
        if (got < 0) broken("a strip could not be decoded");
        if (got < n * row_bytes) broken("a strip holds fewer rows than the image needs");
      }
    }
    return;
  }
  uint32_t tw = 0, th = 0;
  TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw), TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
  const tmsize_t tile_size = TIFFTileSize(tif), tile_row = TIFFTileRowSize(tif);
  if (tw == 0 || th == 0 || tile_size <= 0 || tile_size > max_alloc || pixel_bits % 8) broken("unsupported or malformed tiles");
  std::vector<uint8_t> tile(static_cast<size_t>(tile_size));
  const int64_t pixel_bytes = pixel_bits / 8;
  for (int p = 0; p < planes; ++p) {
    for (int64_t ty = 0; ty < l.height; ty += th) {
      for (int64_t tx = 0; tx < l.width; tx += tw) {
        const uint32_t index = TIFFComputeTile(tif, static_cast<uint32_t>(tx), static_cast<uint32_t>(ty), 0, static_cast<uint16_t>(p));
        if (TIFFReadEncodedTile(tif, index, tile.data(), tile_size) < 0) broken("a tile could not be decoded");
        const int64_t rows = std::min<int64_t>(th, l.height - ty), cols = std::min<int64_t>(tw, l.width - tx);
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(raw.data() + (p * l.height + ty + r) * row_bytes + tx * pixel_bytes, tile.data() + r * tile_row,
                      static_cast<size_t>(cols * pixel_bytes));
      }
    }
  }
}

// libtiff's RGBA reader (PIL's way for YCbCr other than JPEG-compressed), top row first.
void tiff_read_rgba(TIFF* tif, const TiffLayout& l, TiffSource& source, const std::string& name, std::vector<uint8_t>& raw,
                    std::vector<uint8_t>& rgb) {
  char message[1024] = "";
  TIFFRGBAImage img;
  if (!TIFFRGBAImageOK(tif, message) || !TIFFRGBAImageBegin(&img, tif, 0, message))
    tiff_fail(name, std::string("libtiff cannot convert this YCbCr image (") + message + ")");
  img.req_orientation = ORIENTATION_TOPLEFT;
  raw.resize(static_cast<size_t>(l.width * l.height * 4));
  const int ok = TIFFRGBAImageGet(&img, reinterpret_cast<uint32_t*>(raw.data()), static_cast<uint32_t>(l.width),
                                  static_cast<uint32_t>(l.height));
  TIFFRGBAImageEnd(&img);
  if (!ok) tiff_fail(name, "YCbCr data could not be decoded (" + (source.error.empty() ? "corrupt" : source.error) + ")");
  for (int64_t p = 0; p < l.width * l.height; ++p) {
    const uint32_t v = reinterpret_cast<const uint32_t*>(raw.data())[p];
    rgb[3 * p] = static_cast<uint8_t>(TIFFGetR(v)), rgb[3 * p + 1] = static_cast<uint8_t>(TIFFGetG(v)),
    rgb[3 * p + 2] = static_cast<uint8_t>(TIFFGetB(v));
  }
}

}  // namespace

bool is_tiff(std::string_view b) {
  return b.size() >= 4 && (std::memcmp(b.data(), "II*\0", 4) == 0 || std::memcmp(b.data(), "MM\0*", 4) == 0 ||
                           std::memcmp(b.data(), "II+\0", 4) == 0 || std::memcmp(b.data(), "MM\0+", 4) == 0);
}

ImageInfo tiff_info(std::string_view bytes, const std::string& name) {
  TiffSource source{bytes, 0, {}};
  TiffPtr tif = tiff_open(source, name, int64_t{1} << 30);
  const TiffLayout l = tiff_layout(tif.get(), name);
  ImageInfo info;
  info.format = ImageFormat::kTiff, info.width = l.width, info.height = l.height;
  return info;
}

ImageInfo tiff_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb,
                 std::vector<uint8_t>& raw) {
  TiffSource source{bytes, 0, {}};
  const int64_t max_alloc = std::max<int64_t>(int64_t{64} << 20, max_pixels * 16);  // bytes: one strip or tile
  TiffPtr tif = tiff_open(source, name, max_alloc);
  TiffLayout l = tiff_layout(tif.get(), name);
  ImageInfo info;
  info.format = ImageFormat::kTiff, info.width = l.width, info.height = l.height;
  check_size(info, max_pixels, name);
  rgb.resize(static_cast<size_t>(l.width * l.height * 3));
  if (l.kind == TiffKind::kYcbcrRgba) {
    tiff_read_rgba(tif.get(), l, source, name, raw, rgb);
    return info;
  }
  int64_t row_bytes = 0;
  tiff_read_samples(tif.get(), l, source, name, max_alloc, raw, row_bytes);
  uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;
  if (l.kind == TiffKind::kPalette && !TIFFGetField(tif.get(), TIFFTAG_COLORMAP, &red, &green, &blue))
    tiff_fail(name, "a palette image without a colormap");
  const bool planar = l.planar == PLANARCONFIG_SEPARATE;
  const int64_t plane = l.height * row_bytes;
  for (int64_t y = 0; y < l.height; ++y) {
    for (int64_t x = 0; x < l.width; ++x) {
      // Sample c of the pixel: 8-bit, 16-bit (native order: libtiff swaps), or 1/2/4 bits for one sample.
      const auto sample = [&](int c) -> uint32_t {
        const int64_t k = planar ? x : x * l.samples + c;
        const uint8_t* row = raw.data() + (planar ? c * plane : 0) + y * row_bytes;
        if (l.bits == 8) return row[k];
        if (l.bits == 16) {
          uint16_t v;
          std::memcpy(&v, row + 2 * k, 2);
          return v;
        }
        return (row[k * l.bits / 8] >> (8 - l.bits - k * l.bits % 8)) & ((1u << l.bits) - 1);
      };
      uint8_t* out = &rgb[static_cast<size_t>(3 * (y * l.width + x))];
      switch (l.kind) {
        case TiffKind::kGrey: case TiffKind::kGreyAlpha: {
          const uint32_t s = sample(0);
          uint8_t v = static_cast<uint8_t>(l.bits == 1 ? (s ? 255 : 0) : l.bits == 16 ? std::min<uint32_t>(s, 255) : s);
          if (l.invert) v = static_cast<uint8_t>(255 - v);
          out[0] = out[1] = out[2] = v;
          break;
        }
        case TiffKind::kRgb: {
          const uint32_t a = l.premultiplied ? sample(3) : 255;
          for (int c = 0; c < 3; ++c) {
            const uint32_t s = l.bits == 16 ? sample(c) >> 8 : sample(c);
            out[c] = static_cast<uint8_t>(a == 255 ? s : a == 0 ? 0 : std::min<uint32_t>(255, s * 255 / a));
          }
          break;
        }
        case TiffKind::kPalette: {
          const uint32_t i = sample(0);
          out[0] = static_cast<uint8_t>(red[i] >> 8), out[1] = static_cast<uint8_t>(green[i] >> 8),
          out[2] = static_cast<uint8_t>(blue[i] >> 8);
          break;
        }
        default: {  // CMYK, as PIL's cmyk2rgb
          const int nk = 255 - static_cast<int>(sample(3));
          for (int c = 0; c < 3; ++c) out[c] = static_cast<uint8_t>(std::max(0, nk - muldiv255(static_cast<int>(sample(c)), nk)));
        }
      }
    }
  }
  return info;
}

}  // namespace image_format
}  // namespace fastloop
