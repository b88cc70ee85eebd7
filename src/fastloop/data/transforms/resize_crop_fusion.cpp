// The fused random resize + flip + crop of resize_crop_fusion.h: the crop's window is mapped back through the
// flip into the resized image, that window alone is resized (functional/resize.h's resized_window_u8), the
// padding around it filled, then the window flipped.
#include "fastloop/data/transforms/resize_crop_fusion.h"

#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/functional/flip.h"
#include "fastloop/data/transforms/functional/resize.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace fastloop {
namespace {

// Rows [top, top + height) and columns [left, left + width) of `image` resized to out_height x out_width, into
// `out`; the part of the window outside the resized image is `fill`.
void fused_window_fill(const ImageU8& image, int64_t out_height, int64_t out_width, const PixelRect& window,
                       Interpolation interpolation, bool antialias, const uint8_t fill[4], ImageU8& out,
                       TransformScratch& scratch) {
  const int64_t C = image.channels;
  out.reshape(window.height, window.width, C);
  const int64_t y0 = std::clamp(-window.top, int64_t{0}, window.height);
  const int64_t y1 = std::clamp(out_height - window.top, y0, window.height);
  const int64_t x0 = std::clamp(-window.left, int64_t{0}, window.width);
  const int64_t x1 = std::clamp(out_width - window.left, x0, window.width);
  const auto fill_run = [&](uint8_t* at, int64_t pixels) {
    for (int64_t x = 0; x < pixels; ++x, at += C) std::memcpy(at, fill, static_cast<size_t>(C));
  };
  for (int64_t y = 0; y < window.height; ++y) {
    if (y < y0 || y >= y1 || x0 == x1) {
      fill_run(out.row(y), window.width);
    } else {
      fill_run(out.row(y), x0);
      fill_run(out.row(y) + x1 * C, window.width - x1);
    }
  }
  if (y0 == y1 || x0 == x1) return;
  const PixelRect inside{window.top + y0, window.left + x0, y1 - y0, x1 - x0};
  resized_window_u8(image, out_height, out_width, inside, interpolation, antialias, out.row(y0) + x0 * C,
                    out.row_bytes(), scratch);
}

void fused_flip(ImageU8& image, bool vertical) {
  if (vertical) {
    vertical_flip_u8(image);
  } else {
    horizontal_flip_u8(image);
  }
}

}  // namespace

std::optional<ResizeCropGroup> resize_crop_group(const std::vector<TransformPtr>& transforms, size_t first) {
  ResizeCropGroup group;
  group.first = first;
  size_t k = first;
  if (k < transforms.size()) group.resize = dynamic_cast<const SizeDrawTransform*>(transforms[k++].get());
  if (!group.resize) return std::nullopt;
  if (k < transforms.size()) group.flip = dynamic_cast<const FlipDrawTransform*>(transforms[k].get());
  if (group.flip) ++k;
  if (k < transforms.size()) group.crop = dynamic_cast<const PadCropTransform*>(transforms[k++].get());
  if (!group.crop || !group.crop->pads_constant()) return std::nullopt;
  group.count = k - first;
  return group;
}

void resize_crop_apply(const ResizeCropGroup& group, ImageU8& image, SampleTargets* targets, Draws* draws,
                       TransformScratch& scratch) {
  const int64_t height = image.height, width = image.width;
  const auto [h, w] = group.resize->size_draw(height, width, draws[0]);
  resize_size_check(height, width, h, w);
  const bool flip = group.flip && group.flip->flip_draw(draws[1]);
  const bool vertical = group.flip && group.flip->vertical();
  PadCropParams crop = group.crop->pad_crop_draw(h, w, draws[group.count - 1]);
  uint8_t image_fill[4] = {0, 0, 0, 0}, mask_fill[4] = {0, 0, 0, 0};
  if (crop.changes) {
    group.crop->pad_fills(image.channels, image_fill, targets ? mask_fill : nullptr);
  } else {
    crop = PadCropParams{Padding{}, 0, 0, h, w, false};
  }
  // The window in the resized image before the flip: pad(flip(x), l, r) is flip(pad(x, r, l)).
  const Padding& pad = crop.padding;
  PixelRect window{crop.top - pad.top, crop.left - pad.left, crop.height, crop.width};
  if (flip && vertical) window.top = (h + pad.top + pad.bottom - crop.top - crop.height) - pad.bottom;
  if (flip && !vertical) window.left = (w + pad.left + pad.right - crop.left - crop.width) - pad.right;
  fused_window_fill(image, h, w, window, group.resize->interpolation(), group.resize->antialias(), image_fill,
                    scratch.spare, scratch);
  std::swap(image, scratch.spare);
  if (flip) fused_flip(image, vertical);
  if (!targets) return;
  for (ImageU8& mask : targets->masks) {
    fused_window_fill(mask, h, w, window, Interpolation::kNearest, false, mask_fill, scratch.spare, scratch);
    std::swap(mask, scratch.spare);
    if (flip) fused_flip(mask, vertical);
  }
  if (h != height || w != width) boxes_resize(targets->boxes, height, width, h, w);
  keypoints_resize(targets->keypoints, height, width, h, w);
  if (flip && vertical) {
    boxes_flip_vertical(targets->boxes, h);
    keypoints_flip_vertical(targets->keypoints, h);
  }
  if (flip && !vertical) {
    boxes_flip_horizontal(targets->boxes, w);
    keypoints_flip_horizontal(targets->keypoints, w);
  }
  if (crop.changes) group.crop->pad_crop_boxes(*targets, h, w, crop);
}

}  // namespace fastloop
