// Class maps (semantic segmentation targets) from PNG files: the 8-bit palette or greyscale masks of VOC's
// SegmentationClass/ and of most segmentation sets, read as PIL reads them (mode "P": the palette indices as
// stored, not the colours; mode "L": the grey values), with libspng. No torch types, so the fuzz target
// links only this file and libspng.
#pragma once

#include "fastloop/data/codecs/image_decode.h"  // kImageMaxPixels

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

/// A decoded class map's size.
struct ClassMapSize {
  int64_t height = 0;  // pixels
  int64_t width = 0;   // pixels
};

/// Decodes the PNG `bytes` into `pixels` (resized to height * width, row-major, one byte a pixel):
/// palette images give their indices (1, 2 and 4-bit ones unpacked, as PIL's "P;1/P;2/P;4"), greyscale
/// images their values (8-bit as stored; 2 and 4-bit scaled to 0..255 as PIL's "L;2/L;4"; 1-bit 0 or 1, as
/// numpy reads PIL's mode "1"). Anything else (RGB, grey with alpha, 16-bit), a truncated or corrupt file or
/// one of more than `max_pixels` throws InputError naming `name` and what is accepted.
ClassMapSize class_map_decode(std::string_view bytes, const std::string& name, std::vector<uint8_t>& pixels,
                              int64_t max_pixels = kImageMaxPixels);

/// Reads the file `path` into `scratch` and decodes it; a file that cannot be read throws InputError naming it.
ClassMapSize class_map_read(const std::string& path, std::string& scratch, std::vector<uint8_t>& pixels,
                            int64_t max_pixels = kImageMaxPixels);

} // namespace fastloop
