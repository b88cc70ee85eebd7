// RandomResizedCrop, Resize and CenterCrop: transforms.v2's constructors (checks and messages), make_params
// (RandomResizedCrop's ten tries and central fallback) and kernels (functional/resize.h's resized_crop_u8,
// crop_pad.h's zero-filled crop for a CenterCrop larger than the image).
#include "fastloop/data/transforms/resize_transforms.h"

#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/functional/resize.h"
#include "fastloop/data/transforms/spec.h"

#include <cmath>
#include <utility>

namespace fastloop {
namespace {

constexpr int kCropTries = 10;  // torchvision's make_params

std::string size_repr(int64_t h, int64_t w) {
  std::string out = "(";  // appended: GCC 12 warns (-Wrestrict) on "(" + std::string&& here
  out += std::to_string(h);
  out += ", ";
  out += std::to_string(w);
  return out + ")";
}

// torchvision's _setup_size: a number -> (n, n); a sequence of one -> (s, s); of two -> (h, w).
std::pair<int64_t, int64_t> setup_size(const TransformArgs& args, const std::string& name) {
  const TransformValue& value = args.get(name);
  const char* message = "Please provide only two dimensions (h, w) for size.";
  if (value.kind == TransformValue::Kind::kInt || value.kind == TransformValue::Kind::kFloat) {
    const int64_t n = args.to_int(name, value.number);
    return {n, n};
  }
  if (value.kind != TransformValue::Kind::kList) args.fail_type(name, "an int or a sequence of one or two ints");
  const std::vector<int64_t> sides = args.get_ints(name);
  for (int64_t side : sides) args.to_int(name, static_cast<double>(side));  // refuses sides past 2^31
  if (sides.size() == 1) return {sides[0], sides[0]};
  if (sides.size() != 2) throw InputError(args.transform() + "(): " + message);
  return {sides[0], sides[1]};
}

void check_positive_size(const TransformArgs& args, int64_t h, int64_t w) {
  if (h <= 0 || w <= 0)
    throw InputError(args.transform() + "(): size must be positive, got " + size_repr(h, w));
}

std::pair<double, double> pair_of(const TransformArgs& args, const std::string& name, const std::string& message) {
  const TransformValue& value = args.get(name);
  if (value.kind != TransformValue::Kind::kList || value.list.size() != 2) throw TransformTypeError(args.transform() + "(): " + message);
  const std::vector<double> v = args.get_doubles(name);
  return {v[0], v[1]};
}

bool antialias_of(const TransformArgs& args) {
  return args.is_none("antialias") ? false : args.get_bool("antialias");  // None: False for tensors
}

std::string antialias_repr(bool antialias) { return antialias ? "True" : "False"; }

// The kernel of every plan: the box resized (or, for a box outside the image, crop's zero fill).
void plan_apply(const ResizePlan& plan, ImageU8& image, TransformScratch& scratch) {
  if (!plan.exact || (plan.height == plan.out_height && plan.width == plan.out_width)) {
    if (plan.top == 0 && plan.left == 0 && plan.height == image.height && plan.width == image.width) return;
    crop_u8(image, plan.top, plan.left, plan.out_height, plan.out_width, scratch.spare, scratch);
  } else {
    resized_crop_u8(image, plan.top, plan.left, plan.height, plan.width, plan.out_height, plan.out_width,
                    plan.interpolation, plan.antialias, scratch.spare, scratch);
  }
  std::swap(image, scratch.spare);
}

// A plan on an image and its masks (resampled with nearest, no antialias: torchvision's resize_mask); the
// caller moves the boxes, as each transform's box kernel does.
void plan_apply_targets(const ResizePlan& plan, ImageU8& image, SampleTargets& targets, TransformScratch& scratch) {
  ResizePlan mask_plan = plan;
  mask_plan.interpolation = Interpolation::kNearest, mask_plan.antialias = false;
  for (ImageU8& mask : targets.masks) plan_apply(mask_plan, mask, scratch);
  plan_apply(plan, image, scratch);
}

class RandomResizedCrop : public ResizePlanTransform {
 public:
  RandomResizedCrop(std::pair<int64_t, int64_t> size, std::pair<double, double> scale, std::pair<double, double> ratio,
                    Interpolation interpolation, bool antialias)
      : size_(size), scale_(scale), ratio_(ratio), interpolation_(interpolation), antialias_(antialias) {}
  std::string repr() const override {
    return "RandomResizedCrop(size=" + size_repr(size_.first, size_.second) + ", scale=(" + float_repr(scale_.first) +
           ", " + float_repr(scale_.second) + "), ratio=(" + float_repr(ratio_.first) + ", " + float_repr(ratio_.second) +
           "), interpolation=" + interpolation_repr(interpolation_) + ", antialias=" + antialias_repr(antialias_) + ")";
  }
  ResizePlan plan(int64_t height, int64_t width, Draws& draws) const override {
    ResizePlan plan;
    plan.out_height = size_.first, plan.out_width = size_.second;
    plan.interpolation = interpolation_, plan.antialias = antialias_;
    const double area = static_cast<double>(height * width);
    for (int t = 0; t < kCropTries; ++t) {
      const auto [w, h] = box_sides_draw(draws, area, scale_.first, scale_.second, ratio_.first, ratio_.second);
      if (0 < w && w <= width && 0 < h && h <= height) {
        plan.top = draws.below(height - h + 1);
        plan.left = draws.below(width - w + 1);
        plan.height = h, plan.width = w;
        return plan;
      }
    }
    const double in_ratio = static_cast<double>(width) / static_cast<double>(height);  // fallback: central crop
    const double ratio_min = std::min(ratio_.first, ratio_.second), ratio_max = std::max(ratio_.first, ratio_.second);
    int64_t w = width, h = height;
    if (in_ratio < ratio_min) {
      h = py_round(static_cast<double>(w) / ratio_min);
    } else if (in_ratio > ratio_max) {
      w = py_round(static_cast<double>(h) * ratio_max);
    }
    plan.top = (height - h) / 2, plan.left = (width - w) / 2, plan.height = h, plan.width = w;
    return plan;
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    plan_apply(plan(image.height, image.width, draws), image, scratch);
  }
  ImageSize output_size(ImageSize) const override { return {size_.first, size_.second}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  // resized_crop_bounding_boxes: crop (clamped), then resize.
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const ResizePlan p = plan(image.height, image.width, draws);
    plan_apply_targets(p, image, targets, scratch);
    boxes_crop(targets.boxes, p.top, p.left, p.height, p.width, targets.clamp_boxes);
    boxes_resize(targets.boxes, p.height, p.width, p.out_height, p.out_width);
    keypoints_translate(targets.keypoints, -p.left, -p.top);
    keypoints_resize(targets.keypoints, p.height, p.width, p.out_height, p.out_width);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const ResizePlan p = plan(height, width, draws);
    return {{"top", {static_cast<double>(p.top)}}, {"left", {static_cast<double>(p.left)}},
            {"height", {static_cast<double>(p.height)}}, {"width", {static_cast<double>(p.width)}}};
  }

 private:
  std::pair<int64_t, int64_t> size_;
  std::pair<double, double> scale_, ratio_;
  Interpolation interpolation_;
  bool antialias_;
};

class Resize : public ResizePlanTransform {
 public:
  Resize(std::vector<int64_t> size, Interpolation interpolation, int64_t max_size, bool antialias)
      : size_(std::move(size)), interpolation_(interpolation), max_size_(max_size), antialias_(antialias) {}
  std::string repr() const override {
    std::string size = size_.empty() ? "None" : size_.size() == 1 ? std::to_string(size_[0]) : size_repr(size_[0], size_[1]);
    return "Resize(size=" + size + ", interpolation=" + interpolation_repr(interpolation_) +
           ", max_size=" + (max_size_ > 0 ? std::to_string(max_size_) : "None") + ", antialias=" + antialias_repr(antialias_) + ")";
  }
  ResizePlan plan(int64_t height, int64_t width, Draws& draws) const override {
    (void)draws;
    ResizePlan plan;
    plan.height = height, plan.width = width;
    std::tie(plan.out_height, plan.out_width) = resize_output_size(height, width, size_, max_size_);
    plan.interpolation = interpolation_;
    // torchvision's resize_image: antialias only for bilinear and bicubic.
    plan.antialias = antialias_ && (interpolation_ == Interpolation::kBilinear || interpolation_ == Interpolation::kBicubic);
    return plan;
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    plan_apply(plan(image.height, image.width, draws), image, scratch);
  }
  ImageSize output_size(ImageSize in) const override {  // one side or max_size alone: it follows the image's
    if (size_.size() == 2) return {size_[0], size_[1]};
    if (!in.known()) return {};
    const auto [height, width] = resize_output_size(in.height, in.width, size_, max_size_);
    return {height, width};
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const ResizePlan p = plan(image.height, image.width, draws);
    plan_apply_targets(p, image, targets, scratch);
    boxes_resize(targets.boxes, p.height, p.width, p.out_height, p.out_width);  // not clamped, as torchvision's
    keypoints_resize(targets.keypoints, p.height, p.width, p.out_height, p.out_width);
  }

 private:
  std::vector<int64_t> size_;  // empty: None; one value: the shorter side
  Interpolation interpolation_;
  int64_t max_size_;  // 0: None
  bool antialias_;
};

class CenterCrop : public ResizePlanTransform {
 public:
  explicit CenterCrop(std::pair<int64_t, int64_t> size) : size_(size) {}
  std::string repr() const override { return "CenterCrop(size=" + size_repr(size_.first, size_.second) + ")"; }
  // center_crop_image: pad with zeros to the crop where it is larger, then crop at the rounded centre.
  ResizePlan plan(int64_t height, int64_t width, Draws& draws) const override {
    (void)draws;
    const auto [crop_h, crop_w] = size_;
    ResizePlan plan;
    plan.out_height = plan.height = crop_h, plan.out_width = plan.width = crop_w;
    const int64_t pad_top = crop_h > height ? (crop_h - height) / 2 : 0;
    const int64_t pad_left = crop_w > width ? (crop_w - width) / 2 : 0;
    const int64_t padded_h = std::max(height, crop_h), padded_w = std::max(width, crop_w);
    plan.top = py_round(static_cast<double>(padded_h - crop_h) / 2.0) - pad_top;
    plan.left = py_round(static_cast<double>(padded_w - crop_w) / 2.0) - pad_left;
    plan.exact = crop_h <= height && crop_w <= width;
    return plan;
  }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    plan_apply(plan(image.height, image.width, draws), image, scratch);
  }
  ImageSize output_size(ImageSize) const override { return {size_.first, size_.second}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  // center_crop_bounding_boxes: crop at int(round((side - crop) / 2)), which for a crop larger than the image by
  // an odd number of pixels is one pixel off the image's padding (torchvision's own difference, kept).
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const int64_t height = image.height, width = image.width;
    plan_apply_targets(plan(height, width, draws), image, targets, scratch);
    const int64_t top = py_round(static_cast<double>(height - size_.first) / 2.0);
    const int64_t left = py_round(static_cast<double>(width - size_.second) / 2.0);
    boxes_crop(targets.boxes, top, left, size_.first, size_.second, targets.clamp_boxes);
    keypoints_translate(targets.keypoints, -left, -top);
  }

 private:
  std::pair<int64_t, int64_t> size_;
};

}  // namespace

std::pair<int64_t, int64_t> resize_output_size(int64_t height, int64_t width, const std::vector<int64_t>& size,
                                               int64_t max_size) {
  const int64_t shorter = std::min(height, width), longer = std::max(height, width);
  int64_t new_short = 0, new_long = 0;
  if (size.empty()) {  // int(max_size * short / long), max_size
    new_short = static_cast<int64_t>(static_cast<double>(max_size * shorter) / static_cast<double>(longer));
    new_long = max_size;
  } else if (size.size() == 1) {
    new_short = size[0];
    new_long = static_cast<int64_t>(static_cast<double>(size[0] * longer) / static_cast<double>(shorter));
    if (max_size > 0 && new_long > max_size) {
      new_short = static_cast<int64_t>(static_cast<double>(max_size * new_short) / static_cast<double>(new_long));
      new_long = max_size;
    }
  } else {
    return {size[0], size[1]};
  }
  return width <= height ? std::pair<int64_t, int64_t>{new_long, new_short} : std::pair<int64_t, int64_t>{new_short, new_long};
}

void transforms_register_resize(TransformRegistry& registry) {
  registry.add("RandomResizedCrop",
               {param_required("size"), {"scale", value_floats({0.08, 1.0})}, {"ratio", value_floats({3.0 / 4.0, 4.0 / 3.0})},
                {"interpolation", value_string("bilinear")}, {"antialias", value_bool(true)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const auto size = setup_size(args, "size");
                 check_positive_size(args, size.first, size.second);
                 const auto scale = pair_of(args, "scale", "Scale should be a sequence of two floats.");
                 const auto ratio = pair_of(args, "ratio", "Ratio should be a sequence of two floats.");
                 if (!(scale.first >= 0.0 && scale.first <= scale.second))
                   throw InputError("RandomResizedCrop(): scale should be (min, max) with 0 <= min <= max, got (" +
                                    float_repr(scale.first) + ", " + float_repr(scale.second) + ")");
                 if (!(ratio.first > 0.0 && ratio.first <= ratio.second))
                   throw InputError("RandomResizedCrop(): ratio should be (min, max) with 0 < min <= max, got (" +
                                    float_repr(ratio.first) + ", " + float_repr(ratio.second) + ")");
                 return std::make_shared<RandomResizedCrop>(size, scale, ratio, args.get_interpolation("interpolation"),
                                                            antialias_of(args));
               });
  registry.add("Resize",
               {param_required("size"), {"interpolation", value_string("bilinear")}, {"max_size", value_none()},
                {"antialias", value_bool(true)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const TransformValue& given = args.get("size");
                 std::vector<int64_t> size;
                 const int64_t max_size = args.is_none("max_size") ? 0 : args.get_int("max_size");
                 if (given.kind == TransformValue::Kind::kInt) {
                   size = {given.integer};
                 } else if (given.kind == TransformValue::Kind::kList && (given.list.size() == 1 || given.list.size() == 2)) {
                   size = args.get_ints("size");
                 } else if (given.kind == TransformValue::Kind::kNone) {
                   if (args.is_none("max_size"))
                     throw InputError("Resize(): max_size must be an integer when size is None, but got None instead.");
                 } else {
                   throw InputError("Resize(): size can be an integer, a sequence of one or two integers, or None, but got " +
                                    value_repr(given) + " instead.");
                 }
                 for (int64_t side : size) {
                   args.to_int("size", static_cast<double>(side));  // refuses sides past 2^31
                   if (side <= 0) throw InputError("Resize(): size must be positive, got " + value_repr(given));
                 }
                 args.to_int("max_size", static_cast<double>(max_size));
                 if (max_size > 0 && size.size() == 2)
                   throw InputError("Resize(): max_size should only be passed if size is None or specifies the length of "
                                    "the smaller edge, i.e. size should be an int or a sequence of length 1 in torchscript mode.");
                 if (max_size > 0 && size.size() == 1 && max_size <= size[0])
                   throw InputError("Resize(): max_size = " + std::to_string(max_size) + " must be strictly greater than "
                                    "the requested size for the smaller edge size = " + value_repr(given));
                 return std::make_shared<Resize>(size, args.get_interpolation("interpolation"), max_size, antialias_of(args));
               });
  registry.add("CenterCrop", {param_required("size")}, [](const TransformArgs& args) -> TransformPtr {
    const auto size = setup_size(args, "size");
    check_positive_size(args, size.first, size.second);
    return std::make_shared<CenterCrop>(size);
  });
}

} // namespace fastloop
