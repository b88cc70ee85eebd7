// Flips in place. Vertical: rows swapped in 64-byte pieces. Horizontal: each row copied aside, then written
// back reversed -- RGB 5 pixels per byte shuffle (16 bytes in, 15 out) and grey 16 pixels per shuffle, which
// the AVX2 clone turns into one pshufb each; other channel counts a pixel at a time.
#include "fastloop/data/transforms/functional/flip.h"

#include "fastloop/data/transforms/functional/cpu_clones.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace fastloop {
namespace {

typedef uint8_t Bytes16 __attribute__((vector_size(16)));

/// dst = the w RGB pixels of src in reverse order. Each step reads 16 bytes ending at a pixel's last byte
/// (one byte of the pixel before, then 5 pixels) and writes 16 (5 pixels, then one byte the next step or
/// the tail overwrites), so neither runs past the row while 6 or more pixels remain.
FASTLOOP_AVX2_CLONES
void mirror_row3(const uint8_t* __restrict src, uint8_t* __restrict dst, int64_t w) {
  int64_t x = 0;
  for (; x + 6 <= w; x += 5) {
    Bytes16 v;
    std::memcpy(&v, src + (w - x - 5) * 3 - 1, sizeof(v));
    v = __builtin_shufflevector(v, v, 13, 14, 15, 10, 11, 12, 7, 8, 9, 4, 5, 6, 1, 2, 3, 0);
    std::memcpy(dst + x * 3, &v, sizeof(v));
  }
  for (; x < w; ++x) std::memcpy(dst + x * 3, src + (w - 1 - x) * 3, 3);
}

/// dst = the w bytes of src in reverse order, 16 at a time.
FASTLOOP_AVX2_CLONES
void mirror_row1(const uint8_t* __restrict src, uint8_t* __restrict dst, int64_t w) {
  int64_t x = 0;
  for (; x + 16 <= w; x += 16) {
    Bytes16 v;
    std::memcpy(&v, src + w - x - 16, sizeof(v));
    v = __builtin_shufflevector(v, v, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    std::memcpy(dst + x, &v, sizeof(v));
  }
  for (; x < w; ++x) dst[x] = src[w - 1 - x];
}

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

/// Each row through `mirror` from a copy of it (a buffer per thread, grown to the widest row seen).
template <typename Mirror>
void mirror_rows_copied(ImageU8& image, const Mirror& mirror) {
  thread_local std::vector<uint8_t> row;
  const auto bytes = static_cast<size_t>(image.row_bytes());
  if (row.size() < bytes) row.resize(bytes);
  for (int64_t y = 0; y < image.height; ++y) {
    std::memcpy(row.data(), image.row(y), bytes);
    mirror(row.data(), image.row(y), image.width);
  }
}

}  // namespace

void horizontal_flip_u8(ImageU8& image) {
  switch (image.channels) {
    case 1: mirror_rows_copied(image, mirror_row1); break;
    case 3: mirror_rows_copied(image, mirror_row3); break;
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
