// Reader of the IDX files of MNIST and Fashion-MNIST, plain or gzip-compressed, straight into one uint8
// tensor. Every malformed input throws InputError naming the file, the byte offset (into the
// uncompressed data for .gz), what was expected, what was found and what to do.
#pragma once

#include "fastloop/data/sources/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

// Where Fashion-MNIST is looked for when no directory is given.
constexpr const char* kFashionMnistDefaultDir = "/usr/share/datasets/fashion-mnist";

// Loads an images file (magic 0x00000803: uint8 [N, rows, cols]) and a labels file (magic 0x00000801:
// uint8 [N]) into a Dataset with images [N, 1, rows, cols]. Each label must be < num_classes.
// mean/stddev are computed from these images (cheap: one histogram pass).
Dataset idx_load(const std::string& images_path, const std::string& labels_path, int64_t num_classes);

// Loads train-{images-idx3,labels-idx1}-ubyte and t10k-… from dir, preferring the plain file and else
// the .gz one. Works for MNIST too (same file names). Both splits are normalized with the train split's
// statistics (Fashion-MNIST: mean 0.2860, stddev 0.3530). name is "fashion-mnist".
DatasetSplits fashion_mnist_load(const std::string& dir = kFashionMnistDefaultDir);

// Per-channel mean and standard deviation of uint8 images [N, C, H, W], in [0, 1] units (pixel / 255).
void channel_stats(const at::Tensor& images, std::vector<float>& mean, std::vector<float>& stddev);

} // namespace fastloop
