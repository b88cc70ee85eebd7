// --whiten-stem: airbench94's whitened first layer on small_cnn. The stem conv's filters are set from the patch
// statistics of the training images (models/whiten.h) and frozen, so the optimizer (optim.h) leaves them out of
// its groups. Applied to a model before its optimizer is made.
#pragma once

#include "fastloop/data/sources/dataset.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>

namespace fastloop {

/// The first min(5000, N) images of the split airbench whitens from (its 5000 of CIFAR-10's 50,000).
constexpr int64_t kWhiteningImages = 5000;
/// airbench's eps, added to each eigenvalue before the 1 / sqrt.
constexpr double kWhiteningEps = 5e-4;

/// The first `count` images of `train` (all of them when fewer) as float32 [count, C, H, W] on the CPU, without
/// augmentation and normalised by the same pass as the train loader's batches (data/transforms/augment.h).
at::Tensor whitening_images(const Dataset& train, int64_t count = kWhiteningImages);

/// Freezes small_cnn's stem conv weight ("stem.0.weight": requires_grad false) and, when `initialise` (a fresh
/// run: --resume and --init-from bring their own stem), sets its first rows to patch_whitening_filters() of
/// whitening_images(train); rows past 2 * in_channels * 9 keep their default init. Throws InputError naming
/// `model_name` for a model without small_cnn's stem.
void stem_whitening_configure(torch::nn::Module& model, const Dataset& train, const std::string& model_name,
                              bool initialise);

} // namespace fastloop
