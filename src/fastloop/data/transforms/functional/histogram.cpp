// Histogram kernels (histogram.h): one pass to count or find each channel's extremes, one pass through a
// 256-entry table per channel (lookup.h). Channels are interleaved (HWC), so a pixel's channels index
// different tables.
#include "fastloop/data/transforms/functional/histogram.h"

#include "fastloop/data/transforms/functional/color.h"
#include "fastloop/data/transforms/functional/cpu_clones.h"
#include "fastloop/data/transforms/functional/lookup.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace fastloop {
namespace {

typedef uint8_t Bytes32 __attribute__((vector_size(32)));

/// Each channel's smallest and largest value over the n bytes of a 1- or 3-channel image: running extremes of
/// 96-byte blocks in three 32-byte vectors (byte j of a block is channel j % c, as 96 is a multiple of 3),
/// then per channel.
FASTLOOP_AVX2_CLONES
void channel_extremes(const uint8_t* p, int64_t n, int64_t c, uint8_t* lo, uint8_t* hi) {
  constexpr int64_t kBlock = 96;
  Bytes32 block_lo[3], block_hi[3];
  for (int k = 0; k < 3; ++k) {
    block_lo[k] = Bytes32{} + 255;
    block_hi[k] = Bytes32{};
  }
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (int k = 0; k < 3; ++k) {
      Bytes32 x;
      std::memcpy(&x, p + i + 32 * k, sizeof(x));
      block_lo[k] = x < block_lo[k] ? x : block_lo[k];
      block_hi[k] = x > block_hi[k] ? x : block_hi[k];
    }
  }
  for (int64_t j = 0; j < kBlock; ++j) {
    lo[j % c] = std::min(lo[j % c], block_lo[j / 32][j % 32]);
    hi[j % c] = std::max(hi[j % c], block_hi[j / 32][j % 32]);
  }
  for (; i < n; ++i) {  // i is a multiple of 96, so of c: byte i is channel 0
    lo[i % c] = std::min(lo[i % c], p[i]);
    hi[i % c] = std::max(hi[i % c], p[i]);
  }
}

} // namespace

void autocontrast_u8(ImageU8& image) {
  check_color_channels(image.channels, "autocontrast");
  const int64_t c = image.channels, n = image.bytes();
  if (n == 0) return;
  uint8_t lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
  channel_extremes(image.data(), n, c, lo, hi);
  uint8_t tables[3 * 256];
  for (int64_t k = 0; k < c; ++k) {
    // torchvision: inv_scale = (max - min) * (1 / 255) in float32; (x - min) / inv_scale, clamped, truncated;
    // a flat channel (max == min) keeps its values.
    float minimum = lo[k], inv_scale = static_cast<float>(hi[k] - lo[k]) * static_cast<float>(1.0 / 255.0);
    if (hi[k] == lo[k]) minimum = 0.0f, inv_scale = 1.0f;
    for (int v = 0; v < 256; ++v) {
      const float out = (static_cast<float>(v) - minimum) / inv_scale;
      tables[k * 256 + v] = static_cast<uint8_t>(std::min(std::max(out, 0.0f), 255.0f));
    }
  }
  lookup_bytes(image.data(), image.bytes(), image.channels, tables);
}

void equalize_u8(ImageU8& image) {
  const int64_t c = image.channels, pixels = image.height * image.width;
  if (pixels == 0 || c > 4) return;
  int32_t hist[4][256];
  std::memset(hist, 0, sizeof(hist));
  const uint8_t* p = image.data();
  if (c == 3) {
    for (int64_t i = 0; i < pixels; ++i, p += 3) ++hist[0][p[0]], ++hist[1][p[1]], ++hist[2][p[2]];
  } else {
    for (int64_t i = 0; i < pixels; ++i, p += c)
      for (int64_t k = 0; k < c; ++k) ++hist[k][p[k]];
  }
  uint8_t tables[4 * 256];
  for (int64_t k = 0; k < c; ++k) {
    uint8_t* table = tables + k * 256;
    // PIL's scheme as torchvision restates it: step = (pixels - count of the brightest level present) // 255;
    // lut[0] = 0, lut[v] = min(255, (cum[v - 1] + step // 2) // step); step 0 leaves the channel as is.
    int last = 255;
    while (last > 0 && hist[k][last] == 0) --last;
    const int64_t step = (pixels - hist[k][last]) / 255;
    if (step == 0) {
      for (int v = 0; v < 256; ++v) table[v] = static_cast<uint8_t>(v);
      continue;
    }
    int64_t cum = 0;
    table[0] = 0;
    for (int v = 1; v < 256; ++v) {
      cum += hist[k][v - 1];
      table[v] = static_cast<uint8_t>(std::min<int64_t>(255, (cum + step / 2) / step));
    }
  }
  lookup_bytes(image.data(), image.bytes(), image.channels, tables);
}

} // namespace fastloop
