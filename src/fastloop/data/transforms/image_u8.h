// The image a transform pipeline works on: 8-bit, interleaved (HWC), 1, 3 or 4 channels, in a buffer a
// loader worker owns and reuses from image to image (it grows to the largest image seen, never shrinks),
// so running a pipeline allocates nothing per image once the buffers have grown. No torch types here:
// the kernels compile without LibTorch's headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fastloop {

struct ImageU8 {
  int64_t height = 0;    // pixels
  int64_t width = 0;     // pixels
  int64_t channels = 3;  // 1 (grey), 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;  // height * width * channels bytes used; capacity kept

  /// Sets the shape, growing the buffer when it is too small (the pixels are then undefined).
  void reshape(int64_t new_height, int64_t new_width, int64_t new_channels) {
    height = new_height;
    width = new_width;
    channels = new_channels;
    const auto bytes = static_cast<size_t>(height * width * channels);
    if (pixels.size() < bytes) pixels.resize(bytes);
  }
  int64_t row_bytes() const { return width * channels; }
  int64_t bytes() const { return height * width * channels; }
  uint8_t* data() { return pixels.data(); }
  const uint8_t* data() const { return pixels.data(); }
  uint8_t* row(int64_t y) { return pixels.data() + y * row_bytes(); }
  const uint8_t* row(int64_t y) const { return pixels.data() + y * row_bytes(); }
};

/// A worker's buffers besides the image: kernels that cannot work in place write into `spare` and swap it
/// with the image; `floats` and `ints` hold per-image intermediates (blur rows, histograms, tables).
struct TransformScratch {
  ImageU8 spare;
  std::vector<float> floats;
  std::vector<int32_t> ints;
  std::vector<float> field;  // a per-image field that outlives a kernel's use of `floats` (ElasticTransform's)
};

} // namespace fastloop
