// Fused batch assembly: a 256-entry lookup table per channel turns a uint8 pixel into its normalized
// float, so the inner loop is a gather and a store; padding reads as pixel value 0, as in torchvision.
#include "fastloop/data/augment.h"

#include "fastloop/data/sampler.h"

#include <ATen/ATen.h>

#include <array>
#include <stdexcept>
#include <string>

namespace fastloop {

void batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                    uint64_t seed, int64_t epoch, at::Tensor& images, at::Tensor& labels) {
  const int64_t C = dataset.channels(), H = dataset.height(), W = dataset.width();
  const int64_t pad = options.crop ? options.pad : 0;
  std::vector<std::array<float, 256>> lut(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) {
    const float mean = dataset.mean.empty() ? 0.f : dataset.mean[static_cast<size_t>(c)];
    const float inv_std = dataset.stddev.empty() ? 1.f : 1.f / dataset.stddev[static_cast<size_t>(c)];
    for (int v = 0; v < 256; ++v) lut[static_cast<size_t>(c)][static_cast<size_t>(v)] = (static_cast<float>(v) / 255.f - mean) * inv_std;
  }
  const uint8_t* src = dataset.images.data_ptr<uint8_t>();
  const int64_t* src_labels = dataset.labels.data_ptr<int64_t>();
  float* dst = images.data_ptr<float>();
  int64_t* dst_labels = labels.data_ptr<int64_t>();
  const int64_t n = dataset.size(), plane = H * W;

  for (int64_t b = 0; b < count; ++b) {
    const int64_t index = indices[b];
    if (index < 0 || index >= n)
      throw std::out_of_range("sample " + std::to_string(index) + " is outside the dataset of " +
                              std::to_string(n) + " samples");
    const uint64_t r = hash_mix(seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index));
    const int64_t oy = pad ? static_cast<int64_t>(r % static_cast<uint64_t>(2 * pad + 1)) - pad : 0;
    const int64_t ox = pad ? static_cast<int64_t>((r >> 16) % static_cast<uint64_t>(2 * pad + 1)) - pad : 0;
    const bool flip = options.flip && ((r >> 40) & 1u);
    const int64_t label = src_labels[index];
    if (label < 0 || label >= dataset.num_classes)
      throw std::out_of_range("sample " + std::to_string(index) + ": label " + std::to_string(label) +
                              " is not in [0, " + std::to_string(dataset.num_classes) + ")");
    dst_labels[b] = label;

    for (int64_t c = 0; c < C; ++c) {
      const auto& table = lut[static_cast<size_t>(c)];
      const uint8_t* in = src + (index * C + c) * plane;
      float* out = dst + (b * C + c) * plane;
      for (int64_t y = 0; y < H; ++y) {
        const int64_t sy = y + oy;
        float* row = out + y * W;
        if (sy < 0 || sy >= H) {
          std::fill(row, row + W, table[0]);
          continue;
        }
        const uint8_t* in_row = in + sy * W;
        for (int64_t x = 0; x < W; ++x) {
          const int64_t sx = (flip ? W - 1 - x : x) + ox;
          row[x] = (sx >= 0 && sx < W) ? table[in_row[sx]] : table[0];
        }
      }
    }
  }
}

} // namespace fastloop
