// Histogram kernels (histogram.h): one pass to count or find each channel's extremes, one pass through a
// 256-entry table per channel. Channels are interleaved (HWC), so a pixel's channels index different tables.
#include "fastloop/data/transforms/functional/histogram.h"

#include "fastloop/data/transforms/functional/color.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace fastloop {
namespace {

/// Maps every channel through its table: tables[c * 256 + value].
void apply_channel_tables(ImageU8& image, const uint8_t* tables) {
  const int64_t c = image.channels, pixels = image.height * image.width;
  uint8_t* p = image.data();
  if (c == 1) {
    for (int64_t i = 0; i < pixels; ++i) p[i] = tables[p[i]];
    return;
  }
  if (c == 3) {
    const uint8_t *t0 = tables, *t1 = tables + 256, *t2 = tables + 512;
    for (int64_t i = 0; i < pixels; ++i, p += 3) {
      p[0] = t0[p[0]];
      p[1] = t1[p[1]];
      p[2] = t2[p[2]];
    }
    return;
  }
  for (int64_t i = 0; i < pixels; ++i, p += c)
    for (int64_t k = 0; k < c; ++k) p[k] = tables[k * 256 + p[k]];
}

} // namespace

void autocontrast_u8(ImageU8& image) {
  check_color_channels(image.channels, "autocontrast");
  const int64_t c = image.channels, n = image.bytes();
  if (n == 0) return;
  uint8_t lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
  const uint8_t* p = image.data();
  for (int64_t i = 0; i < n; i += c)
    for (int64_t k = 0; k < c; ++k) {
      lo[k] = std::min(lo[k], p[i + k]);
      hi[k] = std::max(hi[k], p[i + k]);
    }
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
  apply_channel_tables(image, tables);
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
  apply_channel_tables(image, tables);
}

} // namespace fastloop
