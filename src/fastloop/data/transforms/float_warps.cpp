// RandomRotation, RandomAffine and RandomPerspective on float images (float_ops.h): the draws as their uint8 path
// draws them (Transform::draw), then torchvision's rotate_image / affine_image / perspective_image restated with
// ATen's ops: the inverse affine matrix, _affine_grid or _perspective_grid (linspace, bmm), grid_sample, and
// _apply_grid_transform's fill through an appended ones channel, with no rounding (a float image stays float).
#include "fastloop/data/transforms/float_warps.h"

#include "fastloop/data/transforms/functional/affine.h"
#include "fastloop/data/transforms/functional/warp.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/registry.h"
#include "fastloop/data/transforms/spec.h"

#include <cmath>

namespace fastloop {
namespace {

// _affine_grid: the output's pixel centres (centre origin) times theta's transpose over (w / 2, h / 2).
at::Tensor affine_grid(const std::array<double, 6>& matrix, int64_t w, int64_t h, int64_t ow, int64_t oh,
                       at::ScalarType dtype) {
  const at::Tensor theta = at::tensor(std::vector<double>(matrix.begin(), matrix.end()), at::kDouble).to(dtype).view({1, 2, 3});
  at::Tensor base = at::empty({1, oh, ow, 3}, dtype);
  base.select(3, 0).copy_(at::linspace((1.0 - static_cast<double>(ow)) * 0.5, (static_cast<double>(ow) - 1.0) * 0.5, ow));
  base.select(3, 1).copy_(at::linspace((1.0 - static_cast<double>(oh)) * 0.5, (static_cast<double>(oh) - 1.0) * 0.5, oh).unsqueeze(-1));
  base.select(3, 2).fill_(1);
  const at::Tensor scale = at::tensor({0.5 * static_cast<double>(w), 0.5 * static_cast<double>(h)}, at::kDouble).to(dtype);
  const at::Tensor rescaled = theta.transpose(1, 2).div(scale);
  return base.view({1, oh * ow, 3}).bmm(rescaled).view({1, oh, ow, 2});
}

// _perspective_grid: (a x + b y + c) / (g x + h y + 1) over the output's pixel centres, each bmm'd, minus 1.
at::Tensor perspective_grid(const std::vector<double>& k, int64_t ow, int64_t oh, at::ScalarType dtype) {
  const at::Tensor theta1 = at::tensor({k[0], k[1], k[2], k[3], k[4], k[5]}, at::kDouble).to(dtype).view({1, 2, 3});
  const at::Tensor theta2 = at::tensor({k[6], k[7], 1.0, k[6], k[7], 1.0}, at::kDouble).to(dtype).view({1, 2, 3});
  at::Tensor base = at::empty({1, oh, ow, 3}, dtype);
  const auto options = at::TensorOptions(dtype);
  base.select(3, 0).copy_(at::linspace(0.5, static_cast<double>(ow) + 0.5 - 1.0, ow, options));
  base.select(3, 1).copy_(at::linspace(0.5, static_cast<double>(oh) + 0.5 - 1.0, oh, options).unsqueeze(-1));
  base.select(3, 2).fill_(1);
  const at::Tensor scale = at::tensor({0.5 * static_cast<double>(ow), 0.5 * static_cast<double>(oh)}, at::kDouble).to(dtype);
  const at::Tensor rescaled = theta1.transpose(1, 2).div(scale);
  const at::Tensor flat = base.view({1, oh * ow, 3});
  return flat.bmm(rescaled).div_(flat.bmm(theta2.transpose(1, 2))).sub_(1.0).view({1, oh, ow, 2});
}

// _apply_grid_transform on a float image: a ones channel appended where there is a fill, grid_sample (zeros
// padding, align_corners=False), then the fill where the ones channel fell (nearest) or blended by it (bilinear).
at::Tensor apply_grid(const at::Tensor& image, const at::Tensor& grid, Interpolation mode,
                      const std::optional<std::vector<double>>& fill) {
  const int64_t c = image.size(0);
  at::Tensor x = image.unsqueeze(0);
  if (fill) x = at::cat({x, at::ones({1, 1, image.size(1), image.size(2)}, x.options())}, 1);
  const bool nearest = mode == Interpolation::kNearest;
  x = at::grid_sampler(x, grid, nearest ? 1 : 0, 0, false);
  if (fill) {
    const at::Tensor mask = x.narrow(1, c, 1).expand({1, c, x.size(2), x.size(3)});
    x = x.narrow(1, 0, c);
    const std::vector<double> values = fill->empty() ? std::vector<double>{0.0} : *fill;
    const at::Tensor f = at::tensor(values, at::kDouble).to(x.scalar_type()).view({1, -1, 1, 1});
    x = nearest ? at::where(mask < 0.5, f.expand_as(x), x) : x.sub(f).mul_(mask).add_(f);
  }
  return x.squeeze(0).contiguous();
}

struct WarpArgs {
  Interpolation interpolation;
  std::optional<std::vector<double>> fill;
  std::optional<std::array<double, 2>> center;
  bool expand = false;
};

// The warp's interpolation, fill, centre and expand as it spells them.
WarpArgs warp_args(const Transform& t, bool has_center) {
  const TransformArgs args = float_transform_args(t);
  WarpArgs out{args.get_interpolation("interpolation"), geo_fill(args, "fill"), std::nullopt};
  if (args.transform() == "RandomRotation") out.expand = args.get_bool("expand");
  if (has_center && !args.is_none("center")) {
    const std::vector<double> c = args.get_doubles("center");
    out.center = std::array<double, 2>{c.at(0), c.at(1)};
  }
  return out;
}

// The centre relative to the image's centre, as rotate_image and affine_image pass it.
std::array<double, 2> centre_offset(const std::optional<std::array<double, 2>>& center, int64_t h, int64_t w) {
  if (!center) return {0.0, 0.0};
  return {(*center)[0] - static_cast<double>(w) * 0.5, (*center)[1] - static_cast<double>(h) * 0.5};
}

FloatStep rotation_step(const TransformPtr& t) {
  const WarpArgs a = warp_args(*t, true);
  const bool expand = a.expand;
  return [t, a, expand](at::Tensor& image, Draws& draws) {
    const int64_t h = image.size(1), w = image.size(2);
    const double angle = std::fmod(std::fmod(float_draw(t->draw(h, w, draws), "angle"), 360.0) + 360.0, 360.0);
    if (!a.center) {  // rotate_image's fast paths: transposes, no warp
      if (angle == 0) return;
      if (angle == 180) return void(image = at::rot90(image, 2, {-2, -1}).contiguous());
      if (expand || h == w) {
        if (angle == 90) return void(image = at::rot90(image, 1, {-2, -1}).contiguous());
        if (angle == 270) return void(image = at::rot90(image, 3, {-2, -1}).contiguous());
      }
    }
    const auto matrix = inverse_affine_matrix(centre_offset(a.center, h, w), -angle, {0.0, 0.0}, 1.0, {0.0, 0.0});
    const auto [ow, oh] = expand ? affine_expanded_size(matrix, w, h) : std::pair<int64_t, int64_t>{w, h};
    image = apply_grid(image, affine_grid(matrix, w, h, ow, oh, image.scalar_type()), a.interpolation, a.fill);
  };
}

FloatStep affine_step(const TransformPtr& t) {
  const WarpArgs a = warp_args(*t, true);
  return [t, a](at::Tensor& image, Draws& draws) {
    const int64_t h = image.size(1), w = image.size(2);
    const TransformDraw d = t->draw(h, w, draws);
    const auto matrix = inverse_affine_matrix(centre_offset(a.center, h, w), float_draw(d, "angle"),
                                              {float_draw(d, "translate", 0), float_draw(d, "translate", 1)},
                                              float_draw(d, "scale"), {float_draw(d, "shear", 0), float_draw(d, "shear", 1)});
    image = apply_grid(image, affine_grid(matrix, w, h, w, h, image.scalar_type()), a.interpolation, a.fill);
  };
}

FloatStep perspective_step(const TransformPtr& t) {
  const WarpArgs a = warp_args(*t, false);
  return [t, a](at::Tensor& image, Draws& draws) {
    const int64_t h = image.size(1), w = image.size(2);
    const TransformDraw d = t->draw(h, w, draws);
    const std::vector<double>* k = float_draw_values(d, "coefficients");
    if (float_draw(d, "applied") == 0.0 || !k || k->size() != 8) return;
    image = apply_grid(image, perspective_grid(*k, w, h, image.scalar_type()), a.interpolation, a.fill);
  };
}

}  // namespace

std::optional<FloatStep> float_warp_step(const TransformPtr& transform) {
  const std::string name = spec_parse(transform->repr()).at(0).name;
  if (name == "RandomRotation") return rotation_step(transform);
  if (name == "RandomAffine") return affine_step(transform);
  if (name == "RandomPerspective") return perspective_step(transform);
  return std::nullopt;
}

}  // namespace fastloop
