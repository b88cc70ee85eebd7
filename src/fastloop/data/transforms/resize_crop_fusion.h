// A random resize (RandomResize, RandomShortestSize, ScaleJitter), an optional flip, then RandomCrop, run as one
// step that resizes only the window the crop keeps. Segmentation's reference pipeline scales photos by up to
// 2.8x and keeps 480 x 480 of them, so a separate resize computes mostly pixels the crop throws away. The crop
// draws from the resized size alone and each resized pixel is computed from its own source pixels, so the draws
// and the bytes are those of the transforms run one after another (tests/test_resize_crop_fusion.cpp).
#pragma once

#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/transform.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace fastloop {

/// A transform that resizes the whole image, its masks (nearest) and its boxes to a drawn size.
class SizeDrawTransform : public Transform {
 public:
  /// make_params: {height, width} of the output, from exactly the draws apply() makes.
  virtual std::pair<int64_t, int64_t> size_draw(int64_t height, int64_t width, Draws& draws) const = 0;
  virtual Interpolation interpolation() const = 0;
  /// Whether the image's resize antialiases (masks never do).
  virtual bool antialias() const = 0;
};

/// RandomHorizontalFlip / RandomVerticalFlip.
class FlipDrawTransform : public Transform {
 public:
  /// Whether apply() flips, from exactly its draws.
  virtual bool flip_draw(Draws& draws) const = 0;
  virtual bool vertical() const = 0;
};

/// What a crop does to an image: pad it by `padding`, then keep rows [top, top + height) and columns
/// [left, left + width) of the padded image. A crop that leaves the image as it is: no padding, the whole image.
struct PadCropParams {
  Padding padding;
  int64_t top = 0, left = 0, height = 0, width = 0;  // pixels of the padded image
  bool changes = false;  // false: apply() returns the image untouched
};

/// A crop that pads with a constant fill per tv_tensor type (RandomCrop).
class PadCropTransform : public Transform {
 public:
  /// make_params for a height x width image, from exactly the draws apply() makes (it throws where apply() does).
  virtual PadCropParams pad_crop_draw(int64_t height, int64_t width, Draws& draws) const = 0;
  /// Whether every padding it adds is constant and none is negative: only such a crop fuses.
  virtual bool pads_constant() const = 0;
  /// The fill bytes of an image of `channels` channels, and of masks unless `mask_fill` is nullptr (an image
  /// without targets: apply()), checked as apply() and apply_targets() check them.
  virtual void pad_fills(int64_t channels, uint8_t image_fill[4], uint8_t* mask_fill) const = 0;
  /// The boxes of a height x width image padded and cropped by `params` (shifted, clamped) as apply_targets() does.
  virtual void pad_crop_boxes(SampleTargets& targets, int64_t height, int64_t width, const PadCropParams& params) const = 0;
};

/// Top-level transforms [first, first + count) of a pipeline that run as one step.
struct ResizeCropGroup {
  size_t first = 0, count = 0;
  const SizeDrawTransform* resize = nullptr;
  const FlipDrawTransform* flip = nullptr;  // nullptr: no flip between the resize and the crop
  const PadCropTransform* crop = nullptr;
};

/// The group of `transforms` that starts at `first`: a SizeDrawTransform, an optional flip, then a crop that
/// pads_constant(); nullopt when they are not.
std::optional<ResizeCropGroup> resize_crop_group(const std::vector<TransformPtr>& transforms, size_t first);

/// The image, masks and boxes that the group's transforms make one after the other (apply_targets(); with
/// `targets` nullptr, apply()), draws[i] being the draws of transform group.first + i.
void resize_crop_apply(const ResizeCropGroup& group, ImageU8& image, SampleTargets* targets, Draws* draws,
                       TransformScratch& scratch);

}  // namespace fastloop
