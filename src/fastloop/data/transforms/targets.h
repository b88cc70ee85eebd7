// What a detection or segmentation sample carries besides its image: torchvision's BoundingBoxes and Mask
// tv_tensors, which every geometric transform moves with the pixels from one draw of its parameters
// (transforms.v2's one kernel per (op, type)). Boxes are kept as XYXY in double precision on the image's
// canvas whatever format they are given back in; masks are 1-channel uint8 images of the image's size,
// resampled with nearest and filled with the transform's fill for masks. KeyPoints are x, y pairs in float32, as
// torchvision keeps them (its kernels compute in the points' dtype), never clamped by a geometric transform (only
// ClampKeyPoints clamps them). No torch types: the kernels compile without LibTorch.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fastloop {

/// torchvision's BoundingBoxFormat (the axis-aligned ones).
enum class BoxFormat { kXYXY, kXYWH, kCXCYWH };

/// "XYXY", "XYWH" or "CXCYWH" (any case, as BoundingBoxFormat[...] and its value); InputError otherwise.
BoxFormat box_format_parse(const std::string& name);
const char* box_format_name(BoxFormat format);

/// How a transform treats a sample's targets (Transform::target_support()).
enum class TargetSupport {
  kNone,    // it cannot move them: a pipeline with targets refuses it (TypeError), as torchvision's own refusals
  kPixels,  // it changes pixel values only (colour, blur, erasing): boxes and masks pass through
  kMoves,   // apply_targets() moves boxes and masks with the pixels
};

struct SampleTargets {
  bool has_boxes = false;
  std::vector<double> boxes;      // box_count() * 4, XYXY in pixels of the image's current canvas
  BoxFormat format = BoxFormat::kXYXY;  // what the boxes are given back in (ConvertBoundingBoxFormat sets it)
  std::vector<int64_t> labels;    // one per box, or empty: SanitizeBoundingBoxes drops them with their boxes
  std::vector<int64_t> kept;      // one per box: its index among the sample's boxes before any was dropped
  std::vector<ImageU8> masks;     // instance masks (one per box) or a class map (one), 1 channel, image-sized
  bool instance_masks = false;    // masks[i] belongs to box i (SanitizeBoundingBoxes drops it with the box)
  bool clamp_boxes = true;        // the boxes' clamping_mode is "soft" or "hard" (false: None, SetClampingMode(None))

  bool has_keypoints = false;
  std::vector<float> keypoints;           // x, y pairs in pixels of the image's current canvas
  std::vector<int64_t> keypoints_shape;   // the KeyPoints tensor's shape without its last dimension (2): {N, K}, {N}

  int64_t box_count() const { return static_cast<int64_t>(boxes.size() / 4); }
  bool empty() const { return !has_boxes && masks.empty() && !has_keypoints; }
  /// Keeps the boxes (and their labels, kept indices and instance masks) whose `valid` entry is true.
  void keep(const std::vector<bool>& valid);
};

/// XYXY boxes written in `format` (convert_bounding_box_format), and read from it.
void boxes_to_format(const std::vector<double>& xyxy, BoxFormat format, std::vector<double>& out);
void boxes_from_format(const std::vector<double>& boxes, BoxFormat format, std::vector<double>& xyxy);

/// The fill a transform's `fill` gives masks (one channel): None stays None, one value is that value; one
/// value per image channel throws InputError naming `transform` (give masks their own fill).
std::optional<std::vector<double>> mask_fill(const std::optional<std::vector<double>>& fill,
                                             const std::string& transform);

} // namespace fastloop
