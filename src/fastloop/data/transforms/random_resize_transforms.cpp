// RandomShortestSize, RandomResize and ScaleJitter: the random resizes of torchvision's detection and
// segmentation references (Faster R-CNN's multi-scale training, DeepLab's RandomResize, Copy-Paste's large scale
// jitter). make_params draws the output size (torch's arithmetic: ScaleJitter's in float32); the kernel is
// Resize's (functional/resize.h on the image, nearest on masks, boxes scaled and not clamped).
#include "fastloop/data/transforms/detection_transforms.h"

#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/functional/resize.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/resize_crop_fusion.h"
#include "fastloop/data/transforms/resize_transforms.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace fastloop {
namespace {

// F.resize of an image, its masks and its boxes to out_height x out_width (an unchanged size is left as is).
void random_resize_sample(ImageU8& image, SampleTargets* targets, int64_t out_height, int64_t out_width,
                          Interpolation interpolation, bool antialias, TransformScratch& scratch) {
  const int64_t height = image.height, width = image.width;
  resize_size_check(height, width, out_height, out_width);
  if (out_height == height && out_width == width) return;
  resized_crop_u8(image, 0, 0, height, width, out_height, out_width, interpolation, antialias, scratch.spare, scratch);
  std::swap(image, scratch.spare);
  if (!targets) return;
  for (ImageU8& mask : targets->masks) {
    resized_crop_u8(mask, 0, 0, height, width, out_height, out_width, Interpolation::kNearest, false, scratch.spare,
                    scratch);
    std::swap(mask, scratch.spare);
  }
  boxes_resize(targets->boxes, height, width, out_height, out_width);
  keypoints_resize(targets->keypoints, height, width, out_height, out_width);
}

// The part the three share: draw an output size for a height x width input, then resize to it.
class RandomResizeBase : public SizeDrawTransform {
 public:
  explicit RandomResizeBase(const TransformArgs& args, const std::vector<std::string>& names)
      : interpolation_(args.get_interpolation("interpolation")),
        antialias_(args.is_none("antialias") ? false : args.get_bool("antialias")),  // None: False for tensors
        repr_(geo_repr(args, names)) {
    // resize_image: antialias only for bilinear and bicubic; resize_mask: nearest, no antialias.
    antialias_ = antialias_ && (interpolation_ == Interpolation::kBilinear || interpolation_ == Interpolation::kBicubic);
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const auto [h, w] = size_draw(image.height, image.width, draws);
    random_resize_sample(image, nullptr, h, w, interpolation_, antialias_, scratch);
  }
  ImageSize output_size(ImageSize) const override { return {}; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const auto [h, w] = size_draw(image.height, image.width, draws);
    random_resize_sample(image, &targets, h, w, interpolation_, antialias_, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const auto [h, w] = size_draw(height, width, draws);
    return {{"size", {double(h), double(w)}}};
  }
  Interpolation interpolation() const override { return interpolation_; }
  bool antialias() const override { return antialias_; }

 private:
  Interpolation interpolation_;
  bool antialias_;
  std::string repr_;
};

// RandomShortestSize(min_size, max_size=None, ...): the shorter side becomes one of min_size (torch.randint), the
// longer at most max_size; both sides int(side * r).
class RandomShortestSize final : public RandomResizeBase {
 public:
  RandomShortestSize(const TransformArgs& args, std::vector<int64_t> min_size, int64_t max_size)
      : RandomResizeBase(args, {"min_size", "max_size", "interpolation", "antialias"}),
        min_size_(std::move(min_size)),
        max_size_(max_size) {}

  std::pair<int64_t, int64_t> size_draw(int64_t height, int64_t width, Draws& draws) const override {
    const int64_t side = min_size_[static_cast<size_t>(draws.below(static_cast<int64_t>(min_size_.size())))];
    double r = static_cast<double>(side) / static_cast<double>(std::min(height, width));
    if (max_size_ > 0) r = std::min(r, static_cast<double>(max_size_) / static_cast<double>(std::max(height, width)));
    return {static_cast<int64_t>(static_cast<double>(height) * r), static_cast<int64_t>(static_cast<double>(width) * r)};
  }

 private:
  std::vector<int64_t> min_size_;
  int64_t max_size_;  // 0: None
};

// RandomResize(min_size, max_size, ...): Resize(size) with size ~ torch.randint(min_size, max_size).
class RandomResize final : public RandomResizeBase {
 public:
  RandomResize(const TransformArgs& args, int64_t min_size, int64_t max_size)
      : RandomResizeBase(args, {"min_size", "max_size", "interpolation", "antialias"}),
        min_size_(min_size),
        max_size_(max_size) {}

  std::pair<int64_t, int64_t> size_draw(int64_t height, int64_t width, Draws& draws) const override {
    const int64_t size = min_size_ + draws.below(max_size_ - min_size_);
    return resize_output_size(height, width, {size}, 0);
  }

 private:
  int64_t min_size_, max_size_;
};

// ScaleJitter(target_size, scale_range=(0.1, 2.0), ...): r = min(target_size[1] / height, target_size[0] / width)
// * scale, scale ~ U(scale_range) as a float32 tensor, so r and the sides int(side * r) are float32 products.
class ScaleJitter final : public RandomResizeBase {
 public:
  ScaleJitter(const TransformArgs& args, std::vector<double> target_size, std::vector<double> scale_range)
      : RandomResizeBase(args, {"target_size", "scale_range", "interpolation", "antialias"}),
        target_size_(std::move(target_size)),
        scale_range_(std::move(scale_range)) {}

  std::pair<int64_t, int64_t> size_draw(int64_t height, int64_t width, Draws& draws) const override {
    const float u = torch_rand(draws);
    const float scale = static_cast<float>(scale_range_[0]) + static_cast<float>(scale_range_[1] - scale_range_[0]) * u;
    const double base = std::min(target_size_[1] / static_cast<double>(height), target_size_[0] / static_cast<double>(width));
    const float r = static_cast<float>(base) * scale;
    return {static_cast<int64_t>(static_cast<float>(height) * r), static_cast<int64_t>(static_cast<float>(width) * r)};
  }

 private:
  std::vector<double> target_size_, scale_range_;
};

// A sequence of exactly two numbers (torchvision indexes [0] and [1]; anything else fails on the first sample).
std::vector<double> random_resize_pair(const TransformArgs& args, const std::string& name) {
  const TransformValue& value = args.get(name);
  if (value.kind != TransformValue::Kind::kList || value.list.size() != 2)
    args.fail_type(name, "a sequence of two numbers");
  return args.get_doubles(name);
}

}  // namespace

void transforms_register_random_resizes(TransformRegistry& registry) {
  const std::vector<TransformParam> tail = {{"interpolation", value_string("bilinear")}, {"antialias", value_bool(true)}};
  auto signature = [&](std::vector<TransformParam> head) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  registry.add("RandomShortestSize", signature({param_required("min_size"), {"max_size", value_none()}}),
               [](const TransformArgs& args) -> TransformPtr {
                 const std::vector<int64_t> min_size = args.get_ints("min_size");  // an int: [min_size]
                 if (min_size.empty())  // torch.randint(0, ()) on the first sample
                   throw InputError("RandomShortestSize(): min_size is empty: random_ expects 'from' to be less than "
                                    "'to', but got from=0 >= to=0");
                 const int64_t max_size = args.is_none("max_size") ? 0 : args.get_int("max_size");
                 return std::make_shared<RandomShortestSize>(args, min_size, max_size);
               });
  registry.add("RandomResize", signature({param_required("min_size"), param_required("max_size")}),
               [](const TransformArgs& args) -> TransformPtr {
                 const int64_t min_size = args.get_int("min_size"), max_size = args.get_int("max_size");
                 if (min_size >= max_size)  // torch.randint(min_size, max_size) on the first sample
                   throw InputError("RandomResize(): random_ expects 'from' to be less than 'to', but got from=" +
                                    std::to_string(min_size) + " >= to=" + std::to_string(max_size));
                 if (min_size <= 0) throw InputError("RandomResize(): min_size must be positive, got " + std::to_string(min_size));
                 return std::make_shared<RandomResize>(args, min_size, max_size);
               });
  registry.add("ScaleJitter", signature({param_required("target_size"), {"scale_range", value_floats({0.1, 2.0})}}),
               [](const TransformArgs& args) -> TransformPtr {
                 return std::make_shared<ScaleJitter>(args, random_resize_pair(args, "target_size"),
                                                      random_resize_pair(args, "scale_range"));
               });
}

}  // namespace fastloop
