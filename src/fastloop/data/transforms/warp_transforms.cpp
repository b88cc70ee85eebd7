// RandomRotation, RandomAffine, RandomPerspective and GaussianBlur as torchvision.transforms.v2 defines them:
// the constructor's checks, make_params' draws in torchvision's order (uniform_ -> Draws::uniform, randint ->
// Draws::below), and the kernels of functional/affine.h, perspective.h and blur.h. Registered by
// transforms_register_geometry (geometry_transforms.cpp).
#include "fastloop/data/transforms/functional/affine.h"
#include "fastloop/data/transforms/functional/blur.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/functional/perspective.h"
#include "fastloop/data/transforms/functional/warp.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/spec.h"

#include <memory>
#include <tuple>

namespace fastloop {
namespace {

// A Python list of floats, as torchvision's messages print its normalised arguments: "[0.1, 2.0]".
std::string geo_numbers_repr(const std::vector<double>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + float_repr(values[i]);
  return s + "]";
}

std::optional<std::array<double, 2>> geo_center(const TransformArgs& args) {
  const auto c = geo_sequence(args, "center", 2);
  if (!c) return std::nullopt;
  return std::array<double, 2>{(*c)[0], (*c)[1]};
}

// The parts the three warps share: interpolation, fill, center.
struct WarpOptions {
  Interpolation interpolation;
  std::optional<std::vector<double>> fill, mask;  // the image's fill and the masks' (a fill per type differs)
  std::optional<std::array<double, 2>> center;
  WarpOptions(const TransformArgs& args, bool has_center)
      : interpolation(geo_interpolation(args, "interpolation", true)),
        fill(geo_fill(args, "fill")),
        mask(geo_fill(args, "fill", "Mask")),
        center(has_center ? geo_center(args) : std::nullopt) {}
  // The masks' fill (one channel).
  WarpFill mask_fill_of(const std::string& transform) const { return warp_fill_make(mask_fill(mask, transform), 1); }
  // The centre the box kernels turn about: `center`, or the canvas's.
  std::array<double, 2> box_center(int64_t height, int64_t width) const {
    return center.value_or(std::array<double, 2>{static_cast<double>(width) * 0.5, static_cast<double>(height) * 0.5});
  }
};

class GeoRandomRotation : public Transform {
 public:
  explicit GeoRandomRotation(const TransformArgs& args)
      : degrees_(geo_angle(args, "degrees", {2})),
        expand_(args.get_bool("expand")),
        warp_(args, true),
        repr_(geo_repr(args, {"degrees", "interpolation", "expand", "center", "fill"})) {}
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    rotate_warp_u8(image, angle(draws), warp_.interpolation, expand_, warp_.center,
                   warp_fill_make(warp_.fill, image.channels), scratch);
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override { return {{"angle", {angle(draws)}}}; }
  ImageSize output_size(ImageSize in) const override { return expand_ ? ImageSize{} : in; }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  // rotate_bounding_boxes: the corners turned by -angle about the centre; with expand, shifted by the turned
  // canvas's top-left corner onto the expanded canvas.
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const double a = angle(draws);
    const int64_t height = image.height, width = image.width;
    const WarpFill fill = warp_.mask_fill_of("RandomRotation");
    for (ImageU8& mask : targets.masks)
      rotate_warp_u8(mask, a, Interpolation::kNearest, expand_, warp_.center, fill, scratch);
    rotate_warp_u8(image, a, warp_.interpolation, expand_, warp_.center, warp_fill_make(warp_.fill, image.channels),
                   scratch);
    const std::array<double, 2> center = warp_.box_center(height, width);
    const auto m = forward_affine_matrix(center, -a, {0.0, 0.0}, 1.0, {0.0, 0.0});
    double shift_x = 0.0, shift_y = 0.0;
    int64_t out_height = height, out_width = width;
    if (expand_) {
      const double w = static_cast<double>(width), h = static_cast<double>(height);
      shift_x = std::min({m[2], m[1] * h + m[2], m[0] * w + m[1] * h + m[2], m[0] * w + m[2]});
      shift_y = std::min({m[5], m[4] * h + m[5], m[3] * w + m[4] * h + m[5], m[3] * w + m[5]});
      // torchvision sizes the boxes' canvas about the absolute centre: it can differ by a pixel from the image's
      std::tie(out_width, out_height) =
          affine_expanded_size(inverse_affine_matrix(center, -a, {0.0, 0.0}, 1.0, {0.0, 0.0}), width, height);
    }
    boxes_affine(targets.boxes, m, shift_x, shift_y, out_height, out_width, targets.clamp_boxes);
    const auto kp_shift = expand_ ? keypoints_expand_shift(m, height, width) : std::array<double, 2>{0.0, 0.0};
    keypoints_affine(targets.keypoints, m, kp_shift[0], kp_shift[1]);
  }

 private:
  double angle(Draws& draws) const { return draws.uniform(degrees_[0], degrees_[1]); }
  std::vector<double> degrees_;
  bool expand_;
  WarpOptions warp_;
  std::string repr_;
};

class GeoRandomAffine : public Transform {
 public:
  explicit GeoRandomAffine(const TransformArgs& args)
      : degrees_(geo_angle(args, "degrees", {2})),
        translate_(geo_sequence(args, "translate", 2)),
        scale_(geo_sequence(args, "scale", 2)),
        warp_(args, true),
        repr_(geo_repr(args, {"degrees", "translate", "scale", "shear", "interpolation", "fill", "center"})) {
    if (translate_) {
      for (double t : *translate_) {
        if (!(t >= 0.0 && t <= 1.0)) throw InputError("translation values should be between 0 and 1");
      }
    }
    if (scale_) {
      for (double s : *scale_) {
        if (s <= 0) throw InputError("scale values should be positive");
      }
    }
    if (!args.is_none("shear")) shear_ = geo_angle(args, "shear", {2, 4});
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const Params p = params(image.height, image.width, draws);
    affine_warp_u8(image, p.angle, p.translate, p.scale, p.shear, warp_.interpolation,
                   warp_fill_make(warp_.fill, image.channels), warp_.center, scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    const Params p = params(height, width, draws);
    return {{"angle", {p.angle}},
            {"translate", {p.translate[0], p.translate[1]}},
            {"scale", {p.scale}},
            {"shear", {p.shear[0], p.shear[1]}}};
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    const Params p = params(image.height, image.width, draws);
    const WarpFill fill = warp_.mask_fill_of("RandomAffine");
    for (ImageU8& mask : targets.masks)
      affine_warp_u8(mask, p.angle, p.translate, p.scale, p.shear, Interpolation::kNearest, fill, warp_.center, scratch);
    const auto m =
        forward_affine_matrix(warp_.box_center(image.height, image.width), p.angle, p.translate, p.scale, p.shear);
    boxes_affine(targets.boxes, m, 0.0, 0.0, image.height, image.width, targets.clamp_boxes);
    keypoints_affine(targets.keypoints, m);
    affine_warp_u8(image, p.angle, p.translate, p.scale, p.shear, warp_.interpolation,
                   warp_fill_make(warp_.fill, image.channels), warp_.center, scratch);
  }

 private:
  struct Params {
    double angle = 0.0, scale = 1.0;
    std::array<double, 2> translate = {0.0, 0.0}, shear = {0.0, 0.0};
  };
  // make_params: angle, then tx, ty (rounded half to even, in pixels), scale, shear x, shear y.
  Params params(int64_t height, int64_t width, Draws& draws) const {
    Params p;
    p.angle = draws.uniform(degrees_[0], degrees_[1]);
    if (translate_) {
      const double max_dx = (*translate_)[0] * static_cast<double>(width);
      const double max_dy = (*translate_)[1] * static_cast<double>(height);
      p.translate[0] = static_cast<double>(py_round(draws.uniform(-max_dx, max_dx)));
      p.translate[1] = static_cast<double>(py_round(draws.uniform(-max_dy, max_dy)));
    }
    if (scale_) p.scale = draws.uniform((*scale_)[0], (*scale_)[1]);
    if (shear_) {
      p.shear[0] = draws.uniform((*shear_)[0], (*shear_)[1]);
      if (shear_->size() == 4) p.shear[1] = draws.uniform((*shear_)[2], (*shear_)[3]);
    }
    return p;
  }
  std::vector<double> degrees_;
  std::optional<std::vector<double>> translate_, scale_, shear_;
  WarpOptions warp_;
  std::string repr_;
};

class GeoRandomPerspective : public Transform {
 public:
  explicit GeoRandomPerspective(const TransformArgs& args)
      : distortion_(args.get_double("distortion_scale")),
        p_(geo_probability(args, "p")),
        warp_(args, false),
        repr_(geo_repr(args, {"distortion_scale", "p", "interpolation", "fill"})) {
    if (!(distortion_ >= 0.0 && distortion_ <= 1.0)) {
      throw InputError("Argument distortion_scale value should be between 0 and 1");
    }
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    if (draws.uniform(0.0, 1.0) >= p_) return;
    QuadPoints start, end;
    points(image.height, image.width, draws, start, end);
    perspective_u8(image, perspective_coefficients(start, end), warp_.interpolation,
                   warp_fill_make(warp_.fill, image.channels), scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    if (draws.uniform(0.0, 1.0) >= p_) return {{"applied", {0.0}}};
    QuadPoints start, end;
    points(height, width, draws, start, end);
    std::vector<double> ends;
    for (const auto& e : end) ends.insert(ends.end(), {e[0], e[1]});
    const auto k = perspective_coefficients(start, end);
    return {{"applied", {1.0}}, {"endpoints", ends}, {"coefficients", std::vector<double>(k.begin(), k.end())}};
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    if (draws.uniform(0.0, 1.0) >= p_) return;
    QuadPoints start, end;
    points(image.height, image.width, draws, start, end);
    const auto coefficients = perspective_coefficients(start, end);
    const WarpFill fill = warp_.mask_fill_of("RandomPerspective");
    for (ImageU8& mask : targets.masks) perspective_u8(mask, coefficients, Interpolation::kNearest, fill, scratch);
    boxes_perspective(targets.boxes, coefficients, image.height, image.width, targets.clamp_boxes);
    keypoints_perspective(targets.keypoints, coefficients);
    perspective_u8(image, coefficients, warp_.interpolation, warp_fill_make(warp_.fill, image.channels), scratch);
  }

 private:
  // make_params: the corners' offsets, each x then y, top-left, top-right, bottom-right, bottom-left.
  void points(int64_t height, int64_t width, Draws& draws, QuadPoints& start, QuadPoints& end) const {
    const int64_t bound_h = static_cast<int64_t>(distortion_ * static_cast<double>(height / 2)) + 1;
    const int64_t bound_w = static_cast<int64_t>(distortion_ * static_cast<double>(width / 2)) + 1;
    const auto between = [&](int64_t lo, int64_t hi) { return static_cast<double>(lo + draws.below(hi - lo)); };
    end[0] = {between(0, bound_w), between(0, bound_h)};
    end[1] = {between(width - bound_w, width), between(0, bound_h)};
    end[2] = {between(width - bound_w, width), between(height - bound_h, height)};
    end[3] = {between(0, bound_w), between(height - bound_h, height)};
    const double w1 = static_cast<double>(width - 1), h1 = static_cast<double>(height - 1);
    start = {{{0.0, 0.0}, {w1, 0.0}, {w1, h1}, {0.0, h1}}};
  }
  double distortion_, p_;
  WarpOptions warp_;
  std::string repr_;
};

class GeoGaussianBlur : public Transform {
 public:
  explicit GeoGaussianBlur(const TransformArgs& args)
      : kernel_(geo_size(args, "kernel_size", "Kernel size should be a tuple/list of two integers")) {
    for (int64_t k : kernel_) {
      if (k <= 0 || k % 2 == 0) throw InputError("Kernel size value should be an odd and positive number.");
    }
    const TransformValue& s = args.get("sigma");  // _setup_number_or_seq
    if (s.kind == TransformValue::Kind::kList && s.list.size() != 1 && s.list.size() != 2) {
      throw InputError("If sigma is a sequence its length should be 1 or 2. Got " + std::to_string(s.list.size()));
    }
    sigma_ = args.get_doubles("sigma");
    if (sigma_.size() == 1) sigma_.push_back(sigma_[0]);
    if (!(0.0 < sigma_[0] && sigma_[0] <= sigma_[1])) {
      throw InputError("sigma values should be positive and of the form (min, max). Got " + geo_numbers_repr(sigma_));
    }
    // As torchvision's object holds them (kernel_size=(23, 23) for 23), so the text and the object compile alike.
    repr_ = "GaussianBlur(kernel_size=" + value_repr(value_ints({kernel_[0], kernel_[1]})) +
            ", sigma=" + value_repr(value_floats(sigma_)) + ")";
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    const double s = sigma(draws);
    gaussian_blur_u8(image, kernel_[0], kernel_[1], s, s, scratch);
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override { return {{"sigma", {sigma(draws)}}}; }

 private:
  double sigma(Draws& draws) const { return draws.uniform(sigma_[0], sigma_[1]); }
  std::array<int64_t, 2> kernel_;
  std::vector<double> sigma_;
  std::string repr_;
};

}  // namespace

void transforms_register_warps(TransformRegistry& registry) {
  registry.add("RandomRotation",
               {param_required("degrees"),
                {"interpolation", value_string("nearest")},
                {"expand", value_bool(false)},
                {"center", value_none()},
                {"fill", value_int(0)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoRandomRotation>(args); });
  registry.add("RandomAffine",
               {param_required("degrees"),
                {"translate", value_none()},
                {"scale", value_none()},
                {"shear", value_none()},
                {"interpolation", value_string("nearest")},
                {"fill", value_int(0)},
                {"center", value_none()}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoRandomAffine>(args); });
  registry.add("RandomPerspective",
               {{"distortion_scale", value_float(0.5)},
                {"p", value_float(0.5)},
                {"interpolation", value_string("bilinear")},
                {"fill", value_int(0)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoRandomPerspective>(args); });
  registry.add("GaussianBlur", {param_required("kernel_size"), {"sigma", value_floats({0.1, 2.0})}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<GeoGaussianBlur>(args); });
}

}  // namespace fastloop
