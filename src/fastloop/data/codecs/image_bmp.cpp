// BMP decoding as PIL's BmpImagePlugin reads a file: headers of 12 (OS/2) to 124 bytes, 1/4/8-bit palette,
// 16-bit 5-5-5 / 5-6-5, 24- and 32-bit, BITFIELDS with PIL's masks, RLE8 and RLE4 (PIL's decoder, step by
// step). Written here rather than taken from a library: no Debian library decodes BMP from memory the way
// PIL maps it (stb_image, libstb-dev, scales 5-bit channels and bitfields differently, has no RLE).
#include "fastloop/data/codecs/image_formats.h"

#include <algorithm>
#include <array>

namespace fastloop {
namespace image_format {
namespace {

constexpr size_t kFileHeader = 14;  // bytes: "BM", size, reserved, pixel offset

struct BmpHeader {
  int64_t width = 0, height = 0;
  bool top_down = false;  // a negative height: rows stored top first
  int bits = 0;
  uint32_t compression = 0;  // 0 raw, 1 RLE8, 2 RLE4, 3 bitfields
  std::array<uint32_t, 4> masks{};  // R, G, B, A for bitfields
  size_t palette_at = 0, pixels_at = 0;
  uint32_t colors = 0;
  int palette_entry = 4;  // bytes per palette entry: BGRX, or BGR for OS/2 headers
};

[[noreturn]] void bmp_fail(const std::string& name, const std::string& why) { fail(name, "BMP: " + why); }

BmpHeader bmp_header(std::string_view b, const std::string& name) {
  if (b.size() < kFileHeader + 4) bmp_fail(name, "the file ends inside its header");
  BmpHeader h;
  size_t offset = le32(b, 10);
  const uint32_t header_size = le32(b, kFileHeader);
  const size_t hd = kFileHeader + 4;  // the header's fields after its size
  if (header_size < 12 || b.size() < kFileHeader + header_size) bmp_fail(name, "the file ends inside its header");
  size_t cursor = kFileHeader + header_size;
  if (header_size == 12) {
    h.width = le16(b, hd), h.height = le16(b, hd + 2), h.bits = static_cast<int>(le16(b, hd + 6));
    h.palette_entry = 3;
  } else if (header_size == 40 || header_size == 52 || header_size == 56 || header_size == 64 || header_size == 108 ||
             header_size == 124) {
    h.top_down = u8(b, hd + 7) == 0xFF;
    h.width = le32(b, hd);
    h.height = h.top_down ? (int64_t{1} << 32) - le32(b, hd + 4) : le32(b, hd + 4);
    h.bits = static_cast<int>(le16(b, hd + 10));
    h.compression = le32(b, hd + 12);
    h.colors = le32(b, hd + 28);
    if (h.compression == 3) {
      size_t at = hd + 36;
      if (header_size - 4 < 48) {  // masks after the header
        if (b.size() < cursor + 12) bmp_fail(name, "the file ends inside its colour masks");
        at = cursor, cursor += 12;
      }
      for (int c = 0; c < 3; ++c) h.masks[c] = le32(b, at + 4 * c);
      h.masks[3] = header_size - 4 >= 52 ? le32(b, at + 12) : 0;
    }
  } else {
    bmp_fail(name, "unsupported header type (" + std::to_string(header_size) + " bytes)");
  }
  if (h.bits != 1 && h.bits != 4 && h.bits != 8 && h.bits != 16 && h.bits != 24 && h.bits != 32)
    bmp_fail(name, "unsupported pixel depth (" + std::to_string(h.bits) + " bits)");
  if (h.compression > 3) bmp_fail(name, "unsupported compression (" + std::to_string(h.compression) + ": JPEG or PNG inside a BMP)");
  if ((h.compression == 1 || h.compression == 2) && h.bits > 8) bmp_fail(name, "RLE compression of a " + std::to_string(h.bits) + "-bit image");
  if (h.bits <= 8) {
    if (h.colors == 0) h.colors = 1u << h.bits;
    if (h.colors > 65536) bmp_fail(name, "unsupported palette size (" + std::to_string(h.colors) + ")");
    if (offset == kFileHeader + header_size) offset += static_cast<size_t>(h.palette_entry) * h.colors;  // as PIL
  }
  h.palette_at = cursor;
  h.pixels_at = offset ? offset : cursor;
  return h;
}

// The palette as PIL holds it: 256 RGB entries, those the file does not give black; a palette that is
// PIL's grey ramp makes an "L" image, whose value is the index itself.
std::array<uint8_t, 768> bmp_palette(std::string_view b, const BmpHeader& h, const std::string& name) {
  const size_t n = h.colors, entry = static_cast<size_t>(h.palette_entry);
  if (h.palette_at + n * entry > b.size()) bmp_fail(name, "the file ends inside its palette");
  std::array<uint8_t, 768> table{};
  bool grey = true;
  for (size_t i = 0; i < n; ++i) {
    const size_t at = h.palette_at + i * entry;
    const uint32_t want = n == 2 ? static_cast<uint32_t>(i * 255) : static_cast<uint32_t>(i);
    grey = grey && u8(b, at) == want && u8(b, at + 1) == want && u8(b, at + 2) == want;
    if (i < 256) table[3 * i] = b[at + 2], table[3 * i + 1] = b[at + 1], table[3 * i + 2] = b[at];
  }
  if (grey && h.bits == 8)
    for (int i = 0; i < 256; ++i) table[3 * i] = table[3 * i + 1] = table[3 * i + 2] = static_cast<uint8_t>(i);
  return table;
}

// PIL's BmpRleDecoder, faithfully: palette indices in file row order (bottom row first unless top-down).
std::vector<uint8_t> bmp_rle_indices(std::string_view b, const BmpHeader& h, const std::string& name) {
  const bool rle4 = h.compression == 2;
  const int64_t w = h.width, total = h.width * h.height;
  std::vector<uint8_t> data;
  data.reserve(static_cast<size_t>(total));
  size_t pos = h.pixels_at;
  int64_t x = 0;
  while (static_cast<int64_t>(data.size()) < total && pos + 2 <= b.size()) {
    int64_t count = u8(b, pos);
    const uint8_t byte = static_cast<uint8_t>(b[pos + 1]);
    pos += 2;
    if (count) {  // a run of one index (RLE4: two alternating)
      count = std::min(count, std::max<int64_t>(0, w - x));
      for (int64_t k = 0; k < count; ++k) data.push_back(rle4 ? (k % 2 ? byte & 0x0F : byte >> 4) : byte);
      x += count;
    } else if (byte == 0) {  // end of line
      while (data.size() % static_cast<size_t>(w)) data.push_back(0);
      x = 0;
    } else if (byte == 1) {  // end of bitmap
      break;
    } else if (byte == 2) {  // delta: skip right and up
      if (pos + 2 > b.size()) break;
      const int64_t skip = u8(b, pos) + static_cast<int64_t>(u8(b, pos + 1)) * w;
      pos += 2;
      // PIL pads past the image's end too, which completes it.
      data.insert(data.end(), static_cast<size_t>(std::min(skip, total - static_cast<int64_t>(data.size()))), 0);
      x = static_cast<int64_t>(data.size()) % w;
    } else {  // absolute: `byte` literal indices, padded to a 16-bit boundary of the file
      const int64_t n = std::min<int64_t>(total - static_cast<int64_t>(data.size()), byte);
      const size_t want = static_cast<size_t>(rle4 ? (n + 1) / 2 : n);
      const size_t got = std::min(want, b.size() - pos);
      for (size_t i = 0; i < got; ++i) {
        const uint8_t v = static_cast<uint8_t>(b[pos + i]);
        if (!rle4) {
          data.push_back(v);
        } else {
          data.push_back(v >> 4);
          if (static_cast<int64_t>(i * 2 + 1) < n) data.push_back(v & 0x0F);
        }
      }
      pos += got;
      if (got < want || static_cast<int64_t>(data.size()) == total) break;
      x += byte;
      if (pos % 2) ++pos;
    }
  }
  if (static_cast<int64_t>(data.size()) < total) bmp_fail(name, "the RLE data ends before the image does (truncated?)");
  data.resize(static_cast<size_t>(total));
  return data;
}

// The channel a bitfield mask of whole bytes selects from a 32-bit pixel.
inline uint8_t mask_channel(uint32_t pixel, uint32_t mask) {
  if (!mask) return 0;
  int shift = 0;
  while (!((mask >> shift) & 1)) ++shift;
  return static_cast<uint8_t>((pixel & mask) >> shift);
}

// The 32-bit masks (R, G, B, A) PIL decodes; all zero means BGRA.
std::array<uint32_t, 4> bmp_masks32(const BmpHeader& h, const std::string& name) {
  if (h.compression != 3) return {0xFF0000, 0xFF00, 0xFF, 0};
  static constexpr std::array<std::array<uint32_t, 4>, 8> kSupported{{
      {0xFF0000, 0xFF00, 0xFF, 0x0}, {0xFF000000, 0xFF0000, 0xFF00, 0x0}, {0xFF000000, 0xFF00, 0xFF, 0x0},
      {0xFF000000, 0xFF0000, 0xFF00, 0xFF}, {0xFF, 0xFF00, 0xFF0000, 0xFF000000}, {0xFF0000, 0xFF00, 0xFF, 0xFF000000},
      {0xFF000000, 0xFF00, 0xFF, 0xFF0000}, {0x0, 0x0, 0x0, 0x0}}};
  if (std::find(kSupported.begin(), kSupported.end(), h.masks) == kSupported.end())
    bmp_fail(name, "unsupported 32-bit bitfields layout");
  if (h.masks == std::array<uint32_t, 4>{}) return {0xFF0000, 0xFF00, 0xFF, 0xFF000000};
  return h.masks;
}

// One stored row of a raw (uncompressed or bitfields) BMP into RGB.
void bmp_row(const uint8_t* in, const BmpHeader& h, const std::array<uint8_t, 768>& palette, bool rgb565,
             const std::array<uint32_t, 4>& masks, uint8_t* out) {
  for (int64_t x = 0; x < h.width; ++x, out += 3) {
    switch (h.bits) {
      case 1: case 4: case 8: {
        const int64_t bit = x * h.bits;
        const int index = (in[bit / 8] >> (8 - h.bits - bit % 8)) & ((1 << h.bits) - 1);
        std::copy_n(&palette[static_cast<size_t>(3 * index)], 3, out);
        break;
      }
      case 16: {
        const int p = in[2 * x] | in[2 * x + 1] << 8;
        if (rgb565) {
          out[0] = static_cast<uint8_t>(((p >> 11) & 31) * 255 / 31);
          out[1] = static_cast<uint8_t>(((p >> 5) & 63) * 255 / 63);
        } else {
          out[0] = static_cast<uint8_t>(((p >> 10) & 31) * 255 / 31);
          out[1] = static_cast<uint8_t>(((p >> 5) & 31) * 255 / 31);
        }
        out[2] = static_cast<uint8_t>((p & 31) * 255 / 31);
        break;
      }
      case 24:
        out[0] = in[3 * x + 2], out[1] = in[3 * x + 1], out[2] = in[3 * x];
        break;
      default: {
        const uint32_t p = in[4 * x] | in[4 * x + 1] << 8 | in[4 * x + 2] << 16 | static_cast<uint32_t>(in[4 * x + 3]) << 24;
        for (int c = 0; c < 3; ++c) out[c] = mask_channel(p, masks[c]);
      }
    }
  }
}

}  // namespace

bool is_bmp(std::string_view b) { return b.size() >= 2 && b[0] == 'B' && b[1] == 'M'; }

ImageInfo bmp_info(std::string_view bytes, const std::string& name) {
  const BmpHeader h = bmp_header(bytes, name);
  ImageInfo info;
  info.format = ImageFormat::kBmp, info.width = h.width, info.height = h.height;
  return info;
}

ImageInfo bmp_decode(std::string_view b, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb) {
  const BmpHeader h = bmp_header(b, name);
  const ImageInfo info = bmp_info(b, name);
  check_size(info, max_pixels, name);
  std::array<uint8_t, 768> palette{};
  if (h.bits <= 8) palette = bmp_palette(b, h, name);
  rgb.resize(static_cast<size_t>(h.width * h.height * 3));
  const auto out_row = [&](int64_t file_row) { return rgb.data() + (h.top_down ? file_row : h.height - 1 - file_row) * h.width * 3; };
  if (h.compression == 1 || h.compression == 2) {
    const std::vector<uint8_t> indices = bmp_rle_indices(b, h, name);
    for (int64_t r = 0; r < h.height; ++r) {
      uint8_t* out = out_row(r);
      for (int64_t x = 0; x < h.width; ++x)
        std::copy_n(&palette[3 * size_t{indices[static_cast<size_t>(r * h.width + x)]}], 3, out + 3 * x);
    }
    return info;
  }
  bool rgb565 = false;
  if (h.compression == 3 && h.bits != 32) {
    const bool m565 = h.masks[0] == 0xF800 && h.masks[1] == 0x7E0 && h.masks[2] == 0x1F;
    const bool m555 = h.masks[0] == 0x7C00 && h.masks[1] == 0x3E0 && h.masks[2] == 0x1F;
    const bool m888 = h.masks[0] == 0xFF0000 && h.masks[1] == 0xFF00 && h.masks[2] == 0xFF;
    if (!(h.bits == 16 && (m565 || m555)) && !(h.bits == 24 && m888)) bmp_fail(name, "unsupported bitfields layout");
    rgb565 = m565;
  }
  const std::array<uint32_t, 4> masks = h.bits == 32 ? bmp_masks32(h, name) : std::array<uint32_t, 4>{};
  const int64_t stride = ((h.width * h.bits + 31) >> 3) & ~int64_t{3};  // bytes per stored row
  if (h.pixels_at > b.size() || (b.size() - h.pixels_at) / static_cast<size_t>(stride) < static_cast<size_t>(h.height))
    bmp_fail(name, "the file ends before its last row (truncated)");
  for (int64_t r = 0; r < h.height; ++r)
    bmp_row(reinterpret_cast<const uint8_t*>(b.data()) + h.pixels_at + r * stride, h, palette, rgb565, masks, out_row(r));
  return info;
}

}  // namespace image_format
}  // namespace fastloop
