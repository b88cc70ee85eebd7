// An image classification split in one of two forms. In memory (IDX, CIFAR, synthetic): uint8 as on
// disk, four times smaller than float32, batches assembled (and augmented) straight from it. Encoded
// (image folders, tar shards): only names, labels and on-demand bytes; the loader decodes, crops and
// resizes each sample to image_height x image_width RGB while it assembles the batch.
#pragma once

#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/sources/target_source.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

struct Dataset {
  at::Tensor images;           // in memory: uint8 [N, C, H, W], contiguous; undefined when encoded
  at::Tensor labels;           // in memory: int64 [N], each in [0, num_classes); undefined when encoded
  std::shared_ptr<const EncodedImages> encoded;  // encoded form: files and labels (null in memory)
  int64_t image_height = 0;    // encoded: the RGB output's size, pixels (the transform's, data/transforms/split_size.h)
  int64_t image_width = 0;
  bool skip_bad_images = false;  // encoded: an undecodable image is counted and replaced, not an error
  bool mark_bad_images = false;  // encoded (predict): an undecodable image leaves zeros and label -1 instead
  int64_t num_classes = 0;
  std::vector<std::string> classes;  // name of each class index (data/sources/class_names.h); at least num_classes
  std::vector<float> mean;     // per channel, in [0, 1] units (pixel / 255)
  std::vector<float> stddev;   // per channel, in [0, 1] units
  // Last, so the positional initializers of the fields above stay as they were.
  std::shared_ptr<const TargetSource> targets;  // encoded detection / segmentation: each sample's boxes and masks

  int64_t size() const { return encoded ? encoded->size() : images.defined() ? images.size(0) : 0; }
  int64_t channels() const { return encoded ? 3 : images.size(1); }
  int64_t height() const { return encoded ? image_height : images.size(2); }
  int64_t width() const { return encoded ? image_width : images.size(3); }
};

struct DatasetSplits {
  Dataset train;
  Dataset test;                // an encoded split may be empty (image folder without val/)
  std::string name;            // "fashion-mnist", "cifar10", "synthetic", "imagefolder"
};

/// Samples [begin, begin + count) of `dataset`, sharing its storage (evaluation's per-rank share).
Dataset dataset_slice(const Dataset& dataset, int64_t begin, int64_t count);

} // namespace fastloop
