// ElasticTransform as torchvision.transforms.v2 defines it (_geometry.py): make_params draws a displacement per
// image side — uniform noise in [-1, 1) (torch.rand * 2 - 1, here from the sample's Draws), blurred with
// F.gaussian_blur (reflect padding, kernel int(8 sigma + 1) made odd, the two sigmas as torchvision passes them),
// times alpha / side — and F.elastic samples the image at the identity grid plus that displacement with
// grid_sample (functional/warp.h's warp_elastic_u8, the arithmetic of fastloop's other warps). Masks move with
// nearest sampling; boxes as elastic_bounding_boxes moves them (each corner by the displacement at its ceiled
// pixel, through the approximate inverse grid identity - displacement).
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/warp.h"
#include "fastloop/data/transforms/geometry_args.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

namespace fastloop {
namespace {

// _setup_number_or_seq(arg, name): a number -> [x, x], a sequence of 1 or 2 numbers -> 2 floats.
std::array<double, 2> elastic_pair(const TransformArgs& args, const std::string& name) {
  const TransformValue& v = args.get(name);
  using Kind = TransformValue::Kind;
  const auto number = [](const TransformValue& x) { return x.kind == Kind::kInt || x.kind == Kind::kFloat; };
  if (number(v)) return {v.number, v.number};
  if (v.kind != Kind::kList) throw TransformTypeError(name + " should be a number or a sequence of numbers. Got " + value_repr(v));
  if (v.list.size() != 1 && v.list.size() != 2) {
    throw InputError("If " + name + " is a sequence its length should be 1 or 2. Got " + std::to_string(v.list.size()));
  }
  for (const TransformValue& item : v.list) {
    if (!number(item)) throw InputError(name + " should be a sequence of numbers. Got " + value_repr(item));
  }
  return {v.list.front().number, v.list.back().number};
}

// _get_gaussian_kernel1d: softmax(-(x / sigma)^2) over linspace(-lim, lim, size), lim = (size - 1) / (2 sqrt 2).
void elastic_kernel(int64_t size, double sigma, std::vector<float>& out) {
  out.resize(static_cast<size_t>(size));
  const double lim = static_cast<double>(size - 1) / (2.0 * std::sqrt(2.0));
  double sum = 0.0;
  for (int64_t i = 0; i < size; ++i) {
    const double x = size == 1 ? -lim : -lim + 2.0 * lim * static_cast<double>(i) / static_cast<double>(size - 1);
    sum += std::exp(-(x / sigma) * (x / sigma));
  }
  for (int64_t i = 0; i < size; ++i) {
    const double x = size == 1 ? -lim : -lim + 2.0 * lim * static_cast<double>(i) / static_cast<double>(size - 1);
    out[static_cast<size_t>(i)] = static_cast<float>(std::exp(-(x / sigma) * (x / sigma)) / sum);
  }
}

// torch's reflect padding: index -1 reads 1, index n reads n - 2.
inline int64_t elastic_reflect(int64_t i, int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); }

class ElasticTransform final : public Transform {
 public:
  explicit ElasticTransform(const TransformArgs& args)
      : alpha_(elastic_pair(args, "alpha")),
        sigma_(elastic_pair(args, "sigma")),
        interpolation_(geo_interpolation(args, "interpolation", true)),
        fill_(geo_fill(args, "fill")),
        mask_fill_(geo_fill(args, "fill", "Mask")) {
    // make_params blurs one side's noise when its sigma is positive, with both sigmas: gaussian_blur's check
    if ((sigma_[0] > 0.0 || sigma_[1] > 0.0) && !(sigma_[0] > 0.0 && sigma_[1] > 0.0)) {
      throw InputError("sigma should have positive values. Got [" + float_repr(sigma_[0]) + ", " +
                       float_repr(sigma_[1]) + "] (ElasticTransform blurs with both sigmas: give two positive ones, "
                       "or none for no blur)");
    }
    for (int side = 0; side < 2; ++side) {
      if (sigma_[side] > 0.0) {
        kernel_size_[side] = static_cast<int64_t>(8.0 * sigma_[side] + 1.0);
        if (kernel_size_[side] % 2 == 0) ++kernel_size_[side];
        elastic_kernel(kernel_size_[side], sigma_[0], kernels_[side][0]);  // along x
        elastic_kernel(kernel_size_[side], sigma_[1], kernels_[side][1]);  // along y
      }
    }
    const std::string rest = geo_repr(args, {"interpolation", "fill"});
    repr_ = "ElasticTransform(alpha=" + value_repr(value_floats({alpha_[0], alpha_[1]})) +
            ", sigma=" + value_repr(value_floats({sigma_[0], sigma_[1]})) + ", " + rest.substr(rest.find('(') + 1);
  }
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    field_draw(image.height, image.width, draws, scratch);
    warp(image, interpolation_, warp_fill_make(fill_, image.channels), scratch);
  }
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    TransformScratch scratch;
    field_draw(height, width, draws, scratch);
    const auto n = static_cast<std::ptrdiff_t>(height * width * 2);
    return {{"displacement", std::vector<double>(scratch.field.begin(), scratch.field.begin() + n)}};
  }
  TargetSupport target_support() const override { return TargetSupport::kMoves; }
  void apply_targets(ImageU8& image, SampleTargets& targets, Draws& draws, TransformScratch& scratch) const override {
    field_draw(image.height, image.width, draws, scratch);
    const WarpFill masks_fill = warp_fill_make(mask_fill(mask_fill_, "ElasticTransform"), 1);
    for (ImageU8& mask : targets.masks) warp(mask, Interpolation::kNearest, masks_fill, scratch);
    boxes_move(targets.boxes, image.height, image.width, scratch.field.data());
    warp(image, interpolation_, warp_fill_make(fill_, image.channels), scratch);
  }

 private:
  // The displacement into scratch.field (H x W x 2, x then y), then the identity grid's W and H coordinates.
  void field_draw(int64_t height, int64_t width, Draws& draws, TransformScratch& scratch) const {
    const int64_t pixels = height * width;
    if (scratch.field.size() < static_cast<size_t>(2 * pixels + width + height))
      scratch.field.resize(static_cast<size_t>(2 * pixels + width + height));
    if (scratch.floats.size() < static_cast<size_t>(2 * pixels)) scratch.floats.resize(static_cast<size_t>(2 * pixels));
    float* noise = scratch.floats.data();
    float* rows = noise + pixels;
    const float sides[2] = {static_cast<float>(width), static_cast<float>(height)};
    for (int side = 0; side < 2; ++side) {  // dx, then dy: torchvision's order of torch.rand calls
      // torch.rand's float32: 24 random bits times 2^-24; then * 2 - 1
      for (int64_t i = 0; i < pixels; ++i) noise[i] = static_cast<float>(draws.next() >> 40) * 0x1.0p-24f * 2.f - 1.f;
      if (kernel_size_[side] > 0) blur(noise, rows, height, width, side);
      const auto alpha = static_cast<float>(alpha_[side]);
      float* out = scratch.field.data() + side;
      for (int64_t i = 0; i < pixels; ++i) out[2 * i] = noise[i] * alpha / sides[side];
    }
    identity_grid_f32(width, scratch.field.data() + 2 * pixels);
    identity_grid_f32(height, scratch.field.data() + 2 * pixels + width);
  }

  // F.gaussian_blur of one [H, W] float plane in place (rows: H x W of scratch), as the separable sum of its
  // 2-D kernel's outer product: along x, then along y.
  void blur(float* plane, float* rows, int64_t height, int64_t width, int side) const {
    const int64_t size = kernel_size_[side], half = size / 2;
    if (half >= height || half >= width) {
      throw InputError("ElasticTransform: sigma " + float_repr(sigma_[side]) + " blurs with a " + std::to_string(size) +
                       "-pixel kernel, whose reflect padding (" + std::to_string(half) +
                       ") must be below each side of the " + std::to_string(height) + " x " + std::to_string(width) +
                       " image (torch's pad raises here too): give a smaller sigma or resize the image first");
    }
    const std::vector<float>& kx = kernels_[side][0];
    const std::vector<float>& ky = kernels_[side][1];
    for (int64_t y = 0; y < height; ++y) {
      const float* in = plane + y * width;
      for (int64_t x = 0; x < width; ++x) {
        float sum = 0.f;
        for (int64_t k = 0; k < size; ++k) sum += kx[static_cast<size_t>(k)] * in[elastic_reflect(x + k - half, width)];
        rows[y * width + x] = sum;
      }
    }
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        float sum = 0.f;
        for (int64_t k = 0; k < size; ++k)
          sum += ky[static_cast<size_t>(k)] * rows[elastic_reflect(y + k - half, height) * width + x];
        plane[y * width + x] = sum;
      }
    }
  }

  void warp(ImageU8& image, Interpolation interpolation, const WarpFill& fill, TransformScratch& scratch) const {
    const float* field = scratch.field.data();
    const int64_t pixels = image.height * image.width;
    warp_elastic_u8(image, field, field + 2 * pixels, field + 2 * pixels + image.width, interpolation, fill, scratch);
  }

  // elastic_bounding_boxes on XYXY boxes (in float64, as torchvision computes float64 boxes): each corner's
  // pixel (ceiled, clamped to the canvas) moved by the inverse grid there, the corners' extent, clamped.
  static void boxes_move(std::vector<double>& boxes, int64_t height, int64_t width, const float* displacement) {
    const auto axis = [](int64_t size, int64_t i) {  // torch.linspace in float64
      if (size == 1) return 0.0;
      const double s = static_cast<double>(size), start = (1.0 - s) / s, end = (s - 1.0) / s;
      const double step = (end - start) / static_cast<double>(size - 1);
      return i < size / 2 ? start + step * static_cast<double>(i) : end - step * static_cast<double>(size - i - 1);
    };
    for (size_t b = 0; b + 4 <= boxes.size(); b += 4) {
      const double corners[4][2] = {{boxes[b], boxes[b + 1]}, {boxes[b + 2], boxes[b + 1]},
                                    {boxes[b + 2], boxes[b + 3]}, {boxes[b], boxes[b + 3]}};
      double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
      for (const auto& corner : corners) {
        const int64_t ix = std::clamp(static_cast<int64_t>(std::ceil(corner[0])), int64_t{0}, width - 1);
        const int64_t iy = std::clamp(static_cast<int64_t>(std::ceil(corner[1])), int64_t{0}, height - 1);
        const float* d = displacement + (iy * width + ix) * 2;
        const double moved[2] = {(axis(width, ix) - static_cast<double>(d[0]) + 1.0) * (0.5 * static_cast<double>(width)) - 0.5,
                                 (axis(height, iy) - static_cast<double>(d[1]) + 1.0) * (0.5 * static_cast<double>(height)) - 0.5};
        for (int c = 0; c < 2; ++c) lo[c] = std::min(lo[c], moved[c]), hi[c] = std::max(hi[c], moved[c]);
      }
      boxes[b] = lo[0], boxes[b + 1] = lo[1], boxes[b + 2] = hi[0], boxes[b + 3] = hi[1];
    }
    boxes_clamp(boxes, height, width);
  }

  std::array<double, 2> alpha_, sigma_;
  Interpolation interpolation_;
  std::optional<std::vector<double>> fill_, mask_fill_;
  std::array<int64_t, 2> kernel_size_ = {0, 0};     // per side (dx, dy); 0: no blur
  std::array<std::array<std::vector<float>, 2>, 2> kernels_;  // per side, the 1-D kernels along x and y
  std::string repr_;
};

}  // namespace

void transforms_register_elastic(TransformRegistry& registry) {
  registry.add("ElasticTransform",
               {{"alpha", value_float(50.0)},
                {"sigma", value_float(5.0)},
                {"interpolation", value_string("bilinear")},
                {"fill", value_int(0)}},
               [](const TransformArgs& args) -> TransformPtr { return std::make_shared<ElasticTransform>(args); });
}

}  // namespace fastloop
