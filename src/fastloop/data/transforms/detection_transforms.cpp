// RandomZoomOut and RandomIoUCrop (SSD's zoom out and IoU crop) and FixedSizeCrop (torchvision.prototype's crop
// then pad, of the DETR and large-scale-jitter recipes), each on images and their targets: torchvision's
// constructor checks and messages, make_params' draws in its order (torch.rand's float32 arithmetic), and its
// kernels (crop_pad.h on pixels and masks, boxes.h on boxes). The three resizes and the photometric distortion of
// the same recipes are in random_resize_transforms.cpp and photometric_distort.cpp.
#include "fastloop/data/transforms/detection_transforms.h"

#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/spec.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace fastloop {
namespace {

constexpr int kIoUCropMaxRounds = 1000;  // option draws before giving up, where torchvision would loop forever

// int(n * x) for a Python int n and a float32 tensor x: the product is float32, then truncated.
int64_t det_scaled(int64_t n, float x) { return static_cast<int64_t>(static_cast<float>(n) * x); }

// lo + torch.rand(1) * span as torch computes it: float32, the Python floats cast first.
float det_rand_between(Draws& draws, double lo, double span) {
  const float u = torch_rand(draws);
  return static_cast<float>(lo) + static_cast<float>(span) * u;
}

// Image and masks padded (constant mode by default), boxes shifted and clamped to the padded canvas.
void det_pad_sample(ImageU8& image, SampleTargets* targets, const Padding& padding, PaddingMode mode,
                    const std::optional<std::vector<double>>& fill,
                    const std::optional<std::vector<double>>& masks_fill, const std::string& transform,
                    TransformScratch& scratch) {
  if (targets && targets->has_boxes && mode != PaddingMode::kConstant)
    throw InputError(transform + "(): Padding mode '" + padding_mode_name(mode) +
                     "' is not supported with bounding boxes (use padding_mode='constant')");
  if (targets && targets->has_keypoints && mode != PaddingMode::kConstant)
    throw InputError(transform + "(): Padding mode '" + padding_mode_name(mode) +
                     "' is not supported with KeyPoints (supported modes are constant)");
  const int64_t height = image.height, width = image.width;
  uint8_t bytes[4];
  pad_fill_bytes(fill.value_or(std::vector<double>{}), image.channels, bytes);
  pad_u8(image, padding, mode, bytes, scratch.spare, scratch);
  std::swap(image, scratch.spare);
  if (!targets) return;
  if (!targets->masks.empty()) {  // masks' fill asked only when there are masks: SSD's RGB fill with boxes alone
    pad_fill_bytes(mask_fill(masks_fill, transform).value_or(std::vector<double>{}), 1, bytes);
    for (ImageU8& mask : targets->masks) {
      pad_u8(mask, padding, mode, bytes, scratch.spare, scratch);
      std::swap(mask, scratch.spare);
    }
  }
  boxes_pad(targets->boxes, height, width, padding.left, padding.top, padding.right, padding.bottom,
            targets->clamp_boxes);
  keypoints_translate(targets->keypoints, padding.left, padding.top);
}

// F.crop of the image and every mask (zero outside the image); the caller moves the boxes.
void det_crop_pixels(ImageU8& image, SampleTargets& targets, int64_t top, int64_t left, int64_t height, int64_t width,
                     TransformScratch& scratch) {
  for (ImageU8& mask : targets.masks) {
    crop_u8(mask, top, left, height, width, scratch.spare, scratch);
    std::swap(mask, scratch.spare);
  }
  crop_u8(image, top, left, height, width, scratch.spare, scratch);
  std::swap(image, scratch.spare);
}

// RandomZoomOut(fill=0, side_range=(1.0, 4.0), p=0.5): with probability p, the image at a random place of a
// canvas r times its size, r ~ U(side_range).
class RandomZoomOut final : public Transform {
 public:
  explicit RandomZoomOut(const TransformArgs& args)
      : p_(random_apply_p(args)),
        fill_(geo_fill(args, "fill")),
        mask_fill_(geo_fill(args, "fill", "Mask")),
        repr_(geo_repr(args, {"fill", "side_range", "p"})) {
    const auto range = geo_sequence(args, "side_range", 2);
    if (!range) throw TransformTypeError("side_range should be a sequence of length 2.");
    lo_ = (*range)[0], hi_ = (*range)[1];
    if (lo_ < 1.0 || lo_ > hi_) throw InputError("Invalid side range provided " + value_repr(args.get("side_range")) + ".");
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    if (const auto padding = params(image.height, image.width, draws))
      det_pad_sample(image, nullptr, *padding, PaddingMode::kConstant, fill_, mask_fill_, "RandomZoomOut", scratch);
  }
  ImageSize output_size(ImageSize) const override { return {}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    if (const auto padding = params(image.height, image.width, draws))
      det_pad_sample(image, &targets, *padding, PaddingMode::kConstant, fill_, mask_fill_, "RandomZoomOut", scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const auto p = params(height, width, draws);
    if (!p) return {{"apply", {0.0}}};
    return {{"apply", {1.0}}, {"padding", {double(p->left), double(p->top), double(p->right), double(p->bottom)}}};
  }

 private:
  // _RandomApplyTransform's torch.rand(1) >= p, then make_params: r, the canvas, then left and top.
  std::optional<Padding> params(int64_t height, int64_t width, Draws& draws) const {
    if (torch_rand(draws) >= static_cast<float>(p_)) return std::nullopt;
    const float r = det_rand_between(draws, lo_, hi_ - lo_);
    const int64_t canvas_width = det_scaled(width, r), canvas_height = det_scaled(height, r);
    const float rx = torch_rand(draws), ry = torch_rand(draws);
    Padding padding;
    padding.left = det_scaled(canvas_width - width, rx);
    padding.top = det_scaled(canvas_height - height, ry);
    padding.right = canvas_width - (padding.left + width);
    padding.bottom = canvas_height - (padding.top + height);
    return padding;
  }
  double p_;
  std::optional<std::vector<double>> fill_, mask_fill_;
  double lo_ = 1.0, hi_ = 4.0;
  std::string repr_;
};

// RandomIoUCrop(min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0, sampler_options=None,
// trials=40): SSD's crop. As torchvision's _transform, boxes whose centre falls outside the crop are set to
// (0, 0, 0, 0), with their labels and masks kept: a later SanitizeBoundingBoxes drops them.
class RandomIoUCrop final : public Transform, public TargetDrawTransform {
 public:
  explicit RandomIoUCrop(const TransformArgs& args)
      : min_scale_(args.get_double("min_scale")),
        max_scale_(args.get_double("max_scale")),
        min_ratio_(args.get_double("min_aspect_ratio")),
        max_ratio_(args.get_double("max_aspect_ratio")),
        options_(args.is_none("sampler_options") ? std::vector<double>{0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0}
                                                 : args.get_doubles("sampler_options")),
        trials_(args.get_int("trials")),
        repr_(geo_repr(args, {"min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio", "sampler_options",
                              "trials"})) {
    if (options_.empty())  // torch.randint(0, 0) on the first sample
      throw InputError("RandomIoUCrop(): sampler_options is empty: random_ expects 'from' to be less than 'to', but "
                       "got from=0 >= to=0");
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8&, Draws&, TransformScratch&) const override { refuse(); }
  TransformDraw draw(int64_t, int64_t, Draws&) const override { refuse(); }
  ImageSize output_size(ImageSize) const override { return {}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const Crop c = params(image.height, image.width, targets, draws);
    if (!c.crops) return;
    det_crop_pixels(image, targets, c.top, c.left, c.height, c.width, scratch);
    boxes_crop(targets.boxes, c.top, c.left, c.height, c.width, targets.clamp_boxes);
    keypoints_translate(targets.keypoints, -c.left, -c.top);  // moved, never zeroed: only boxes are marked
    for (size_t i = 0; i < c.within.size(); ++i)
      if (!c.within[i]) std::fill_n(targets.boxes.begin() + static_cast<std::ptrdiff_t>(4 * i), 4, 0.0);
  }
  TransformDraw draw_targets(int64_t height, int64_t width, const SampleTargets& targets, Draws& draws) const override {
    const Crop c = params(height, width, targets, draws);
    TransformDraw out{{"min_jaccard_overlap", {c.option}}};
    if (!c.crops) return out;
    std::vector<double> within(c.within.begin(), c.within.end());
    out.insert(out.end(), {{"top", {double(c.top)}}, {"left", {double(c.left)}}, {"height", {double(c.height)}},
                           {"width", {double(c.width)}}, {"is_within_crop_area", within}});
    return out;
  }

 private:
  [[noreturn]] void refuse() const {
    throw TransformTypeError("RandomIoUCrop() requires input sample to contain tensor or PIL images and bounding "
                             "boxes. Sample can also contain masks.");
  }
  struct Crop {
    bool crops = false;
    double option = 1.0;
    int64_t top = 0, left = 0, height = 0, width = 0;
    std::vector<bool> within;
  };
  // make_params: an option, then up to `trials` crops of it, each drawn as torch.rand(2) for the sides and
  // torch.rand(2) for the place, until one holds a box's centre with an IoU of at least the option.
  Crop params(int64_t height, int64_t width, const SampleTargets& targets, Draws& draws) const {
    if (!targets.has_boxes) refuse();
    const std::vector<double>& boxes = targets.boxes;
    const size_t count = boxes.size() / 4;
    Crop c;
    for (int round = 0; round < kIoUCropMaxRounds; ++round) {
      c.option = options_[static_cast<size_t>(draws.below(static_cast<int64_t>(options_.size())))];
      if (c.option >= 1.0) return c;  // leave as is
      for (int64_t t = 0; t < trials_; ++t) {
        const float rw = det_rand_between(draws, min_scale_, max_scale_ - min_scale_);
        const float rh = det_rand_between(draws, min_scale_, max_scale_ - min_scale_);
        const int64_t new_w = det_scaled(width, rw), new_h = det_scaled(height, rh);
        if (new_h == 0) throw InputError("RandomIoUCrop: a crop of height 0 (ZeroDivisionError in torchvision): the "
                                         "image (" + std::to_string(height) + " rows) is too small for min_scale");
        const double ratio = static_cast<double>(new_w) / static_cast<double>(new_h);
        if (!(min_ratio_ <= ratio && ratio <= max_ratio_)) continue;
        const float rx = torch_rand(draws), ry = torch_rand(draws);
        const int64_t left = det_scaled(width - new_w, rx), top = det_scaled(height - new_h, ry);
        const int64_t right = left + new_w, bottom = top + new_h;
        if (left == right || top == bottom) continue;
        c.within.assign(count, false);
        double best_iou = -1.0;
        const double crop_area = double(new_w) * double(new_h);
        for (size_t i = 0; i < count; ++i) {
          const double* b = &boxes[4 * i];
          const double cx = 0.5 * (b[0] + b[2]), cy = 0.5 * (b[1] + b[3]);
          if (!(left < cx && cx < right && top < cy && cy < bottom)) continue;
          c.within[i] = true;
          // torchvision's box_iou: intersection over union, the box's area as given (x2 - x1) * (y2 - y1)
          const double iw = std::max(0.0, std::min(b[2], double(right)) - std::max(b[0], double(left)));
          const double ih = std::max(0.0, std::min(b[3], double(bottom)) - std::max(b[1], double(top)));
          const double inter = iw * ih, area = (b[2] - b[0]) * (b[3] - b[1]);
          best_iou = std::max(best_iou, inter / (area + crop_area - inter));
        }
        if (best_iou < 0.0 || best_iou < c.option) continue;  // no centre inside, or too little overlap
        c.crops = true, c.top = top, c.left = left, c.height = new_h, c.width = new_w;
        return c;
      }
    }
    throw InputError("RandomIoUCrop: no crop found in " + std::to_string(kIoUCropMaxRounds) + " draws of "
                     "sampler_options (torchvision loops forever here): no option >= 1.0 and no box centre a crop can hold");
  }

  double min_scale_, max_scale_, min_ratio_, max_ratio_;
  std::vector<double> options_;
  int64_t trials_;
  std::string repr_;
};

// FixedSizeCrop(size, fill=0, padding_mode="constant") of torchvision.prototype.transforms: a crop of at most
// `size` at offsets (offset_h * r, offset_w * r) from one r ~ torch.rand(1), boxes that become empty dropped with
// their labels and instance masks, then a pad on the right and bottom up to `size`.
class FixedSizeCrop final : public Transform {
 public:
  explicit FixedSizeCrop(const TransformArgs& args)
      : size_(geo_size(args, "size", "Please provide only two dimensions (h, w) for size.")),
        fill_(geo_fill(args, "fill")),
        mask_fill_(geo_fill(args, "fill", "Mask")),
        mode_(padding_mode_parse(args.get_string("padding_mode"))),
        repr_(geo_repr(args, {"size", "fill", "padding_mode"})) {}
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    SampleTargets none;
    run(image, none, draws, scratch);
  }
  ImageSize output_size(ImageSize) const override { return {size_[0], size_[1]}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    if (targets.has_boxes && targets.box_count() > 0 && targets.labels.empty())
      throw TransformTypeError("If a BoundingBoxes is contained in the input sample, FixedSizeCrop() also requires it "
                               "to contain a Label or OneHotLabel.");
    run(image, targets, draws, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const Params p = params(height, width, draws);
    return {{"top", {double(p.top)}},
            {"left", {double(p.left)}},
            {"height", {double(p.height)}},
            {"width", {double(p.width)}},
            {"padding", {0.0, 0.0, double(p.padding.right), double(p.padding.bottom)}}};
  }

 private:
  struct Params {
    bool needs_crop = false, needs_pad = false;
    int64_t top = 0, left = 0, height = 0, width = 0;
    Padding padding;
  };
  Params params(int64_t height, int64_t width, Draws& draws) const {
    Params p;
    p.height = std::min(height, size_[0]), p.width = std::min(width, size_[1]);
    p.needs_crop = p.height != height || p.width != width;
    const float r = torch_rand(draws);
    p.top = det_scaled(std::max<int64_t>(height - size_[0], 0), r);
    p.left = det_scaled(std::max<int64_t>(width - size_[1], 0), r);
    p.padding.bottom = std::max<int64_t>(size_[0] - p.height, 0);
    p.padding.right = std::max<int64_t>(size_[1] - p.width, 0);
    p.needs_pad = p.padding.bottom != 0 || p.padding.right != 0;
    return p;
  }
  void run(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const {
    const Params p = params(image.height, image.width, draws);
    if (p.needs_crop) {
      det_crop_pixels(image, targets, p.top, p.left, p.height, p.width, scratch);
      keypoints_translate(targets.keypoints, -p.left, -p.top);  // F.crop's kernel; not dropped with boxes
      if (targets.has_boxes) {  // crop (clamped), clamped again, and the boxes left without area dropped
        boxes_crop(targets.boxes, p.top, p.left, p.height, p.width, targets.clamp_boxes);
        std::vector<bool> valid(static_cast<size_t>(targets.box_count()));
        for (size_t i = 0; i < valid.size(); ++i) {
          const double* b = &targets.boxes[4 * i];
          valid[i] = b[2] - b[0] > 0 && b[3] - b[1] > 0;
        }
        targets.keep(valid);
      }
    }
    if (p.needs_pad)
      det_pad_sample(image, targets.empty() ? nullptr : &targets, p.padding, mode_, fill_, mask_fill_, "FixedSizeCrop",
                     scratch);
  }

  std::array<int64_t, 2> size_;
  std::optional<std::vector<double>> fill_, mask_fill_;
  PaddingMode mode_;
  std::string repr_;
};

}  // namespace

void transforms_register_detection(TransformRegistry& registry) {
  registry.add("RandomZoomOut", {{"fill", value_int(0)}, {"side_range", value_floats({1.0, 4.0})}, {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<RandomZoomOut>(args); });
  registry.add("RandomIoUCrop",
               {{"min_scale", value_float(0.3)},
                {"max_scale", value_float(1.0)},
                {"min_aspect_ratio", value_float(0.5)},
                {"max_aspect_ratio", value_float(2.0)},
                {"sampler_options", value_none()},
                {"trials", value_int(40)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<RandomIoUCrop>(args); });
  registry.add("FixedSizeCrop", {param_required("size"), {"fill", value_int(0)}, {"padding_mode", value_string("constant")}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<FixedSizeCrop>(args); });
  transforms_register_random_resizes(registry);
  transforms_register_photometric(registry);
}

}  // namespace fastloop
