// Flips in place, no buffer: rows swapped in 64-byte pieces; pixels within a row swapped by a loop per
// channel count (a template each, so the 1, 3 and 4 channel cases unroll).
#include "fastloop/data/transforms/functional/flip.h"

#include <algorithm>
#include <cstring>

namespace fastloop {
namespace {

template <int C>
void mirror_rows(ImageU8& image) {
  for (int64_t y = 0; y < image.height; ++y) {
    uint8_t* a = image.row(y);
    uint8_t* b = a + (image.width - 1) * C;
    for (; a < b; a += C, b -= C) {
      for (int c = 0; c < C; ++c) std::swap(a[c], b[c]);
    }
  }
}

}  // namespace

void horizontal_flip_u8(ImageU8& image) {
  switch (image.channels) {
    case 1: mirror_rows<1>(image); break;
    case 3: mirror_rows<3>(image); break;
    case 4: mirror_rows<4>(image); break;
    default: mirror_rows<2>(image); break;  // not produced by the decoders; kept correct for 2
  }
}

void vertical_flip_u8(ImageU8& image) {
  const auto bytes = static_cast<size_t>(image.row_bytes());
  uint8_t piece[64];
  for (int64_t y = 0, z = image.height - 1; y < z; ++y, --z) {
    uint8_t* a = image.row(y);
    uint8_t* b = image.row(z);
    for (size_t i = 0; i < bytes; i += sizeof(piece)) {
      const size_t n = std::min(sizeof(piece), bytes - i);
      std::memcpy(piece, a + i, n);
      std::memcpy(a + i, b + i, n);
      std::memcpy(b + i, piece, n);
    }
  }
}

}  // namespace fastloop
