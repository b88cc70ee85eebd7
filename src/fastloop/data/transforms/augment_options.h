// The loader's augmentation settings: the fused array pass's crop, flip and erasing, and the transform
// pipeline of encoded images. A header of its own, so the array pass (augment.h) and the encoded-image
// pass (image_augment.h) share it without including each other.
#pragma once

#include <cstdint>
#include <memory>

namespace fastloop {

class Pipeline;

struct AugmentOptions {
  bool crop = false;      // random crop after zero padding by `pad` pixels (torchvision RandomCrop)
  int64_t pad = 4;        // pixels
  bool flip = false;      // horizontal flip with probability 1/2
  double erase = 0.0;     // RandomErasing probability (random_erasing.h); 0: off
  bool alternate_flip = false;  // flip: random in epoch 0, then each sample's flip alternates per epoch (airbench)
  bool fast_decode = false;     // JPEGs decoded at the smallest DCT scale that covers the pipeline's first resize
                                // (--decode fast); false: at full scale, torchvision's pixels
  /// Encoded data: the transform pipeline (pipeline.h) every sample goes through; null: the default that
  /// the flags above stand for (image_augment.h's transform_spec_default). In-memory arrays keep the fused
  /// crop / flip / normalise pass of this file.
  std::shared_ptr<const Pipeline> pipeline;
};

/// The built-in augmentation of CIFAR and Fashion-MNIST recipes: random crop after `pad` pixels of zero
/// padding, and a random horizontal flip.
inline AugmentOptions augment_crop_flip(int64_t pad) {
  AugmentOptions options;
  options.crop = options.flip = true;
  options.pad = pad;
  return options;
}

} // namespace fastloop
