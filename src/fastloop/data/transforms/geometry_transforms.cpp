// torchvision's geometry transforms, registered by name with torchvision's signatures (see families.h):
// the flips, RandomCrop and Pad here (their kernels in functional/flip.h and crop_pad.h, equal bytes),
// the warps and the blur in warp_transforms.cpp. Each class checks its arguments as torchvision's
// constructor does and draws its parameters in the order of torchvision's make_params.
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/functional/flip.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/resize_crop_fusion.h"

#include <memory>
#include <utility>

namespace fastloop {
namespace {

// RandomHorizontalFlip(p=0.5) / RandomVerticalFlip(p=0.5): flips when torch.rand(1) < p.
class GeoRandomFlip : public FlipDrawTransform {
 public:
  GeoRandomFlip(const TransformArgs& args, bool vertical)
      : vertical_(vertical), p_(geo_probability(args, "p")), repr_(geo_repr(args, {"p"})) {}
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch&) const override {
    if (flips(draws)) flip(image);
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override { return {{"flip", {flips(draws) ? 1.0 : 0.0}}}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch&) const override {
    if (!flips(draws)) return;
    for (ImageU8& mask : targets.masks) flip(mask);
    if (vertical_) {
      boxes_flip_vertical(targets.boxes, image.height);
      keypoints_flip_vertical(targets.keypoints, image.height);
    } else {
      boxes_flip_horizontal(targets.boxes, image.width);
      keypoints_flip_horizontal(targets.keypoints, image.width);
    }
    flip(image);
  }

  bool flip_draw(Draws& draws) const override { return flips(draws); }
  bool vertical() const override { return vertical_; }

 private:
  bool flips(Draws& draws) const { return draws.uniform(0.0, 1.0) < p_; }
  void flip(ImageU8& image) const {
    if (vertical_) {
      vertical_flip_u8(image);
    } else {
      horizontal_flip_u8(image);
    }
  }
  bool vertical_;
  double p_;
  std::string repr_;
};

// The constant mode's fill as bytes; torchvision refuses a per-channel fill with the other modes.
void geo_pad_fill(const std::optional<std::vector<double>>& fill, PaddingMode mode, int64_t channels, uint8_t out[4]) {
  if (fill && fill->size() > 1 && mode != PaddingMode::kConstant) {
    throw InputError(std::string("Padding mode '") + padding_mode_name(mode) +
                     "' is not supported if fill is not scalar");
  }
  pad_fill_bytes(fill ? *fill : std::vector<double>{}, channels, out);
}

// pad (then crop) of a sample's boxes and keypoints: shifted, the boxes then clamped to the crop (keypoints never
// are), each shift a step of its own as torchvision's pad then crop.
void geo_pad_crop_boxes(SampleTargets& targets, int64_t height, int64_t width, const Padding& padding, int64_t top,
                        int64_t left, int64_t out_height, int64_t out_width) {
  boxes_pad(targets.boxes, height, width, padding.left, padding.top, padding.right, padding.bottom, targets.clamp_boxes);
  if (padding.left || padding.top) keypoints_translate(targets.keypoints, padding.left, padding.top);
  const int64_t padded_height = height + padding.top + padding.bottom, padded_width = width + padding.left + padding.right;
  if (top != 0 || left != 0 || out_height != padded_height || out_width != padded_width) {
    boxes_crop(targets.boxes, top, left, out_height, out_width, targets.clamp_boxes);
    keypoints_translate(targets.keypoints, -left, -top);
  }
}

// pad (then crop, for RandomCrop) of a sample's targets: masks with their fill, boxes shifted and clamped
// (torchvision pads boxes in constant mode only).
void geo_pad_crop_targets(const std::string& transform, SampleTargets& targets, int64_t height, int64_t width,
                          const Padding& padding, PaddingMode mode,
                          const std::optional<std::vector<double>>& mask_fill_values,
                          int64_t top, int64_t left, int64_t out_height, int64_t out_width, TransformScratch& scratch) {
  if (targets.has_boxes && mode != PaddingMode::kConstant && (padding.left || padding.top || padding.right || padding.bottom))
    throw InputError(transform + "(): Padding mode '" + padding_mode_name(mode) +
                     "' is not supported with bounding boxes (use padding_mode='constant')");
  if (targets.has_keypoints && mode != PaddingMode::kConstant && (padding.left || padding.top || padding.right || padding.bottom))
    throw InputError(transform + "(): Padding mode '" + padding_mode_name(mode) +
                     "' is not supported with KeyPoints (supported modes are constant)");
  uint8_t mask_bytes[4];
  pad_fill_bytes(mask_fill(mask_fill_values, transform).value_or(std::vector<double>{}), 1, mask_bytes);
  for (ImageU8& mask : targets.masks) {
    pad_crop_u8(mask, padding, mode, mask_bytes, top, left, out_height, out_width, scratch.spare, scratch);
    std::swap(mask, scratch.spare);
  }
  geo_pad_crop_boxes(targets, height, width, padding, top, left, out_height, out_width);
}

class GeoPad : public Transform {
 public:
  explicit GeoPad(const TransformArgs& args)
      : padding_(geo_padding(args, "padding")),
        fill_(geo_fill(args, "fill")),
        mask_fill_(geo_fill(args, "fill", "Mask")),
        mode_(padding_mode_parse(args.get_string("padding_mode"))),
        repr_(geo_repr(args, {"padding", "fill", "padding_mode"})) {
    if (fill_ && fill_->size() > 1 && mode_ != PaddingMode::kConstant) {  // refused now, not per image
      uint8_t unused[4];
      geo_pad_fill(fill_, mode_, static_cast<int64_t>(fill_->size()), unused);
    }
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws&, TransformScratch& scratch) const override {
    uint8_t fill[4];
    geo_pad_fill(fill_, mode_, image.channels, fill);
    pad_u8(image, padding_, mode_, fill, scratch.spare, scratch);
    std::swap(image, scratch.spare);
  }
  ImageSize output_size(ImageSize in) const override {
    if (!in.known()) return {};
    return {in.height + padding_.top + padding_.bottom, in.width + padding_.left + padding_.right};
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const int64_t height = image.height, width = image.width;
    apply(image, draws, scratch);
    geo_pad_crop_targets("Pad", targets, height, width, padding_, mode_, mask_fill_, 0, 0, image.height,
                         image.width, scratch);
  }

 private:
  Padding padding_;
  std::optional<std::vector<double>> fill_, mask_fill_;
  PaddingMode mode_;
  std::string repr_;
};

class GeoRandomCrop : public PadCropTransform {
 public:
  explicit GeoRandomCrop(const TransformArgs& args)
      : size_(geo_size(args, "size", "Please provide only two dimensions (h, w) for size.")),
        pad_if_needed_(args.get_bool("pad_if_needed")),
        fill_(geo_fill(args, "fill")),
        mask_fill_(geo_fill(args, "fill", "Mask")),
        mode_(PaddingMode::kConstant),
        repr_(geo_repr(args, {"size", "padding", "pad_if_needed", "fill", "padding_mode"})) {
    const bool padded = !args.is_none("padding");
    if (padded) padding_ = geo_padding(args, "padding");
    // torchvision checks padding_mode only when it pads, and keeps `padding` only when truthy (padding=0: None)
    if (pad_if_needed_ || padded) mode_ = padding_mode_parse(args.get_string("padding_mode"));
    has_padding_ =
        padded && !(args.get("padding").kind == TransformValue::Kind::kInt && args.get("padding").integer == 0);
    if (fill_ && fill_->size() > 1 && mode_ != PaddingMode::kConstant) {
      uint8_t unused[4];
      geo_pad_fill(fill_, mode_, static_cast<int64_t>(fill_->size()), unused);
    }
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const Params p = params(image.height, image.width, draws);
    if (!p.needs_pad && !p.needs_crop) return;
    uint8_t fill[4];
    geo_pad_fill(fill_, mode_, image.channels, fill);
    pad_crop_u8(image, p.needs_pad ? p.padding : Padding{}, mode_, fill, p.top, p.left, size_[0], size_[1],
                scratch.spare, scratch);
    std::swap(image, scratch.spare);
  }
  ImageSize output_size(ImageSize) const override { return {size_[0], size_[1]}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const Params p = params(image.height, image.width, draws);
    if (!p.needs_pad && !p.needs_crop) return;
    const int64_t height = image.height, width = image.width;
    uint8_t fill[4];
    geo_pad_fill(fill_, mode_, image.channels, fill);
    pad_crop_u8(image, p.needs_pad ? p.padding : Padding{}, mode_, fill, p.top, p.left, size_[0], size_[1],
                scratch.spare, scratch);
    std::swap(image, scratch.spare);
    geo_pad_crop_targets("RandomCrop", targets, height, width, p.needs_pad ? p.padding : Padding{}, mode_, mask_fill_,
                         p.top, p.left, size_[0], size_[1], scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const Params p = params(height, width, draws);
    return {{"top", {double(p.top)}},
            {"left", {double(p.left)}},
            {"height", {double(size_[0])}},
            {"width", {double(size_[1])}},
            {"padding",
             {double(p.padding.left), double(p.padding.top), double(p.padding.right), double(p.padding.bottom)}}};
  }
  PadCropParams pad_crop_draw(int64_t height, int64_t width, Draws& draws) const override {
    const Params p = params(height, width, draws);
    PadCropParams out{p.needs_pad ? p.padding : Padding{}, p.top, p.left, size_[0], size_[1], p.needs_pad || p.needs_crop};
    return out;
  }
  bool pads_constant() const override {
    const Padding& p = padding_;
    return mode_ == PaddingMode::kConstant && (!has_padding_ || (p.left >= 0 && p.top >= 0 && p.right >= 0 && p.bottom >= 0));
  }
  void pad_fills(int64_t channels, uint8_t image_fill[4], uint8_t* mask_fill_bytes) const override {
    geo_pad_fill(fill_, mode_, channels, image_fill);
    if (mask_fill_bytes)
      pad_fill_bytes(mask_fill(mask_fill_, "RandomCrop").value_or(std::vector<double>{}), 1, mask_fill_bytes);
  }
  void pad_crop_boxes(SampleTargets& targets, int64_t height, int64_t width, const PadCropParams& p) const override {
    geo_pad_crop_boxes(targets, height, width, p.padding, p.top, p.left, p.height, p.width);
  }

 private:
  struct Params {
    bool needs_pad = false, needs_crop = false;
    int64_t top = 0, left = 0;
    Padding padding;
  };
  // torchvision's make_params: the padded size, pad_if_needed's extra padding, then top, then left.
  Params params(int64_t height, int64_t width, Draws& draws) const {
    Params p;
    if (has_padding_) p.padding = padding_;
    height += p.padding.top + p.padding.bottom;
    width += p.padding.left + p.padding.right;
    if (pad_if_needed_ && height < size_[0]) {
      const int64_t diff = size_[0] - height;
      p.padding.top += diff, p.padding.bottom += diff, height += 2 * diff;
    }
    if (pad_if_needed_ && width < size_[1]) {
      const int64_t diff = size_[1] - width;
      p.padding.left += diff, p.padding.right += diff, width += 2 * diff;
    }
    if (height < size_[0] || width < size_[1]) {
      throw InputError("Required crop size (" + std::to_string(size_[0]) + ", " + std::to_string(size_[1]) +
                       ") is larger than " + (has_padding_ ? "padded " : "") + "input image size (" +
                       std::to_string(height) + ", " + std::to_string(width) + ").");
    }
    p.needs_pad = p.padding.left || p.padding.top || p.padding.right || p.padding.bottom;
    if (height > size_[0]) p.top = draws.below(height - size_[0] + 1);
    if (width > size_[1]) p.left = draws.below(width - size_[1] + 1);
    p.needs_crop = height > size_[0] || width > size_[1];
    return p;
  }

  std::array<int64_t, 2> size_;
  Padding padding_;
  bool has_padding_ = false;
  bool pad_if_needed_;
  std::optional<std::vector<double>> fill_, mask_fill_;
  PaddingMode mode_;
  std::string repr_;
};

}  // namespace

void transforms_register_geometry(TransformRegistry& registry) {
  for (bool vertical : {false, true}) {
    registry.add(vertical ? "RandomVerticalFlip" : "RandomHorizontalFlip", {{"p", value_float(0.5)}},
                 [vertical](const TransformArgs& args) -> TransformPtr {
                   return std::make_shared<GeoRandomFlip>(args, vertical);
                 });
  }
  registry.add("Pad", {param_required("padding"), {"fill", value_int(0)}, {"padding_mode", value_string("constant")}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoPad>(args); });
  registry.add("RandomCrop",
               {param_required("size"),
                {"padding", value_none()},
                {"pad_if_needed", value_bool(false)},
                {"fill", value_int(0)},
                {"padding_mode", value_string("constant")}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoRandomCrop>(args); });
  transforms_register_warps(registry);
}

}  // namespace fastloop
