// The per-format decoders behind ImageDecoder (image_decode.cpp) for the formats other than JPEG and PNG:
// BMP, PNM (PBM/PGM/PPM), WebP and TIFF. Each recognises its bytes, reads its header into an ImageInfo
// and decodes to PIL's convert("RGB") pixels; internal to data/ (no torch types, as image_decode.h).
#pragma once

#include "fastloop/data/codecs/image_types.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {
namespace image_format {

/// Throws InputError "image NAME: WHY; <what to do>".
[[noreturn]] void fail(const std::string& name, const std::string& why);

/// Throws InputError when `info` has no pixels or more than `max_pixels` (before anything is allocated).
void check_size(const ImageInfo& info, int64_t max_pixels, const std::string& name);

/// A byte of `bytes` as unsigned, and little-endian 16/32-bit reads; callers check the bounds.
inline uint32_t u8(std::string_view b, size_t at) { return static_cast<uint8_t>(b[at]); }
inline uint32_t le16(std::string_view b, size_t at) { return u8(b, at) | u8(b, at + 1) << 8; }
inline uint32_t le32(std::string_view b, size_t at) { return le16(b, at) | le16(b, at + 2) << 16; }

// PIL's MULDIV255: a * b / 255 rounded, without a division.
inline int muldiv255(int a, int b) {
  const int tmp = a * b + 128;
  return ((tmp >> 8) + tmp) >> 8;
}

// Each X_decode fills `rgb` (height x width x 3) and returns the size it decoded.
bool is_bmp(std::string_view bytes);
ImageInfo bmp_info(std::string_view bytes, const std::string& name);
ImageInfo bmp_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb);

bool is_pnm(std::string_view bytes);
ImageInfo pnm_info(std::string_view bytes, const std::string& name);
ImageInfo pnm_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb);

bool is_webp(std::string_view bytes);
ImageInfo webp_info(std::string_view bytes, const std::string& name);
ImageInfo webp_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb);

bool is_tiff(std::string_view bytes);
ImageInfo tiff_info(std::string_view bytes, const std::string& name);
ImageInfo tiff_decode(std::string_view bytes, const std::string& name, int64_t max_pixels, std::vector<uint8_t>& rgb,
                 std::vector<uint8_t>& staging);

}  // namespace image_format
}  // namespace fastloop
