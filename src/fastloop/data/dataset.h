// An in-memory image classification dataset kept as uint8, the form it has on disk:
// four times smaller than float32, and batches are assembled (and augmented) straight from it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct Dataset {
  at::Tensor images;           // uint8 [N, C, H, W], contiguous
  at::Tensor labels;           // int64 [N], each in [0, num_classes)
  int64_t num_classes = 0;
  std::vector<float> mean;     // per channel, in [0, 1] units (pixel / 255)
  std::vector<float> stddev;   // per channel, in [0, 1] units

  int64_t size() const { return images.defined() ? images.size(0) : 0; }
  int64_t channels() const { return images.size(1); }
  int64_t height() const { return images.size(2); }
  int64_t width() const { return images.size(3); }
};

struct DatasetSplits {
  Dataset train;
  Dataset test;
  std::string name;            // "fashion-mnist", "cifar10", "synthetic"
};

} // namespace fastloop
