// RandomErasing as transforms.v2 defines it (p, scale, ratio, value incl. 'random', inplace): on the uint8
// image when it comes before the conversion to float, on the float output (pipeline.h) when it comes after.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <vector>

namespace fastloop {

/// make_params' result: the box to erase (erase false: the coin said no, or ten tries found no box).
struct ErasingBox {
  bool erase = false;
  int64_t top = 0, left = 0, height = 0, width = 0;  // pixels
};

class RandomErasingTransform : public Transform {
 public:
  RandomErasingTransform(double p, std::pair<double, double> scale, std::pair<double, double> ratio,
                         std::vector<double> value, bool random, bool inplace)
      : p_(p), scale_(scale), ratio_(ratio), value_(std::move(value)), random_(random), inplace_(inplace) {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override;
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override;
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override;

  /// The coin (torch.rand(1) >= p skips) and the box for a channels x height x width image; a `value` whose
  /// length is neither 1 nor `channels` throws InputError with torchvision's message.
  ErasingBox box_draw(int64_t channels, int64_t height, int64_t width, Draws& draws) const;
  /// The value erased pixel (c, y, x) of the box gets, in the box's channel-major order: value[c] (or its only
  /// value), or a standard normal draw for value='random'.
  double value_draw(int64_t channel, Draws& draws) const;
  /// value='random': a new draw per pixel; otherwise one value per channel, drawn from nothing.
  bool random() const { return random_; }

 private:
  double p_;
  std::pair<double, double> scale_, ratio_;
  std::vector<double> value_;  // one value or one per channel; empty with random_
  bool random_, inplace_;
};

} // namespace fastloop
