// The float steps of float_ops.h: each transform's draws as its uint8 path draws them (the same make_params
// code: ResizePlanTransform::plan, PadCropTransform::pad_crop_draw, Transform::draw), then torchvision's float
// kernel restated with ATen ops in torchvision's order (torchvision/transforms/v2/functional/_geometry.py,
// _color.py, _misc.py of the pinned torchvision 0.29).
#include "fastloop/data/transforms/float_ops.h"

#include "fastloop/data/transforms/erasing_transforms.h"
#include "fastloop/data/transforms/float_warps.h"
#include "fastloop/data/transforms/geometry_args.h"
#include "fastloop/data/transforms/output_stage.h"
#include "fastloop/data/transforms/registry.h"
#include "fastloop/data/transforms/resize_crop_fusion.h"
#include "fastloop/data/transforms/resize_transforms.h"
#include "fastloop/data/transforms/spec.h"

#include <algorithm>

namespace fastloop {
namespace {

// ---------------------------------------------------------------------------------------------- kernels
// crop_image: the box, zero-padded where it reaches past the image.
at::Tensor crop_float(const at::Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width) {
  const int64_t h = image.size(1), w = image.size(2), right = left + width, bottom = top + height;
  if (left >= 0 && top >= 0 && right <= w && bottom <= h)
    return image.slice(1, top, bottom).slice(2, left, right).contiguous();
  const at::Tensor inside = image.slice(1, std::max<int64_t>(top, 0), std::max<int64_t>(bottom, 0))
                                .slice(2, std::max<int64_t>(left, 0), std::max<int64_t>(right, 0));
  return at::constant_pad_nd(inside, {std::max<int64_t>(std::min<int64_t>(right, 0) - left, 0),
                                      std::max<int64_t>(right - std::max(w, left), 0),
                                      std::max<int64_t>(std::min<int64_t>(bottom, 0) - top, 0),
                                      std::max<int64_t>(bottom - std::max(h, top), 0)},
                             0.0);
}

// resize_image on a float image: interpolate(size, mode, align_corners=False for bilinear/bicubic, antialias).
at::Tensor resize_float(const at::Tensor& image, int64_t height, int64_t width, Interpolation mode, bool antialias) {
  if (image.size(1) == height && image.size(2) == width) return image;
  const at::Tensor x = image.unsqueeze(0);
  const std::vector<int64_t> size = {height, width};
  at::Tensor out;
  switch (mode) {
    case Interpolation::kNearest: out = at::upsample_nearest2d(x, size); break;
    case Interpolation::kNearestExact: out = at::_upsample_nearest_exact2d(x, size); break;
    case Interpolation::kBilinear:
      out = antialias ? at::_upsample_bilinear2d_aa(x, size, false) : at::upsample_bilinear2d(x, size, false);
      break;
    case Interpolation::kBicubic:
      out = antialias ? at::_upsample_bicubic2d_aa(x, size, false) : at::upsample_bicubic2d(x, size, false);
      break;
  }
  return out.squeeze(0).contiguous();
}

// _rgb_to_grayscale_image(image, 1, preserve_dtype=False): 0.2989 r + 0.587 g + 0.114 b, [1, H, W].
at::Tensor grey_float(const at::Tensor& image) {
  if (image.size(0) == 1) return image.clone();
  return image[0].mul(0.2989).add_(image[1], 0.587).add_(image[2], 0.114).unsqueeze(0);
}

// _blend on float images: image * ratio + other * (1 - ratio), clamped to [0, 1].
at::Tensor blend_float(const at::Tensor& image, const at::Tensor& other, double ratio) {
  return image.mul(ratio).add_(other, 1.0 - ratio).clamp_(0, 1);
}

void check_colour_channels(const at::Tensor& image) {
  const int64_t c = image.size(0);
  if (c != 1 && c != 3)
    throw TransformTypeError("Input image tensor permitted channel values are 1 or 3, but found " + std::to_string(c));
}

// _rgb_to_hsv, _hsv_to_rgb and adjust_hue_image's shift between them.
at::Tensor hue_float(const at::Tensor& image, double factor) {
  if (image.size(0) == 1 || image.numel() == 0) return image;
  const auto dtype = image.scalar_type();
  const at::Tensor x = image.to(at::kFloat);
  const at::Tensor r = x[0], g = x[1];
  const auto [minc, maxc] = at::aminmax(x, 0);
  const at::Tensor eqc = maxc == minc, range = maxc - minc, ones = at::ones_like(maxc);
  const at::Tensor s = range / at::where(eqc, ones, maxc);
  const at::Tensor divisor = at::where(eqc, ones, range).unsqueeze(0);
  const at::Tensor rgbc = (maxc.unsqueeze(0) - x) / divisor;
  at::Tensor rc = rgbc[0], gc = rgbc[1], bc = rgbc[2];
  at::Tensor not_r = maxc != r, is_g = maxc == g;
  const at::Tensor hg = rc.add(2.0).sub_(bc).mul_(is_g & not_r);
  const at::Tensor hr = bc.sub_(gc).mul_(not_r.logical_not());
  const at::Tensor hb = gc.add_(4.0).sub_(rc).mul_(not_r.logical_and_(is_g.logical_not_()));
  at::Tensor h = hr.add_(hg).add_(hb).mul_(1.0 / 6.0).add_(1.0).fmod_(1.0);
  h.add_(factor).remainder_(1.0);
  // _hsv_to_rgb
  const at::Tensor v = maxc;
  const at::Tensor h6 = h.mul(6), i_float = at::floor(h6), f = h6.sub_(i_float);
  at::Tensor i = i_float.to(at::kInt);
  const at::Tensor sxf = s * f, one_minus_s = 1.0 - s;
  const at::Tensor q = (1.0 - sxf).mul_(v).clamp_(0.0, 1.0);
  const at::Tensor t = sxf.add_(one_minus_s).mul_(v).clamp_(0.0, 1.0);
  const at::Tensor p = one_minus_s.mul_(v).clamp_(0.0, 1.0);
  i.remainder_(6);
  const at::Tensor vpqt = at::stack({v, p, q, t}, 0);
  const at::Tensor select = at::tensor({0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2}, at::kLong).view({3, 6});
  return vpqt.gather(0, select.index_select(1, i.flatten().to(at::kLong)).view({3, i.size(0), i.size(1)}))
      .to(dtype)
      .contiguous();
}

// gaussian_blur_image on a float image: a softmax kernel per axis, reflect padding, a grouped conv2d.
at::Tensor blur_float(const at::Tensor& image, int64_t kx, int64_t ky, double sigma) {
  const auto kernel1d = [&](int64_t k) {
    const double lim = static_cast<double>(k - 1) / (2.0 * std::sqrt(2.0));
    return at::softmax(at::linspace(-lim, lim, k, image.options()).div(sigma).pow(2).neg(), 0);
  };
  const at::Tensor kernel = kernel1d(ky).unsqueeze(-1) * kernel1d(kx);
  const int64_t c = image.size(0);
  const at::Tensor weight = kernel.expand({c, 1, ky, kx});
  const at::Tensor padded = at::reflection_pad2d(image.unsqueeze(0), {kx / 2, kx / 2, ky / 2, ky / 2});
  return at::conv2d(padded, weight, at::Tensor(), at::IntArrayRef{1}, at::IntArrayRef{0}, at::IntArrayRef{1}, c)
      .squeeze(0)
      .contiguous();
}

// ---------------------------------------------------------------------------------------------- steps
FloatStep colour_step(const TransformPtr& t) {
  return [t](at::Tensor& image, Draws& draws) {
    const TransformDraw drawn = t->draw(image.size(1), image.size(2), draws);
    check_colour_channels(image);
    static const char* const kNames[] = {"brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"};
    for (const auto& [key, order] : drawn) {
      if (key != "fn_idx") continue;
      for (const double fn : order) {
        const int k = static_cast<int>(fn);
        const std::vector<double>* factor = float_draw_values(drawn, kNames[k]);
        if (!factor || factor->empty()) continue;
        const double f = (*factor)[0];
        if (k == 0) image = image.mul(f).clamp_(0, 1);
        if (k == 1) image = blend_float(image, at::mean(grey_float(image), {-3, -2, -1}, true), f);
        if (k == 2 && image.size(0) == 3) image = blend_float(image, grey_float(image), f);
        if (k == 3) image = hue_float(image, f);
      }
    }
  };
}

// The colour transforms whose draw is a coin ("apply") or nothing, over one float kernel.
FloatStep coin_step(const TransformPtr& t, std::function<at::Tensor(const at::Tensor&)> kernel) {
  return [t, kernel](at::Tensor& image, Draws& draws) {
    const TransformDraw drawn = t->draw(image.size(1), image.size(2), draws);
    if (drawn.empty() || float_draw(drawn, "apply") != 0.0) image = kernel(image).contiguous();
  };
}

at::Tensor grey_to(const at::Tensor& image, int64_t channels) {
  if (image.size(0) == 1) return channels == 1 ? image.clone() : image.repeat({3, 1, 1});
  const at::Tensor grey = grey_float(image).to(image.scalar_type());
  return channels == 3 ? grey.expand({3, image.size(1), image.size(2)}) : grey;
}

FloatStep pad_crop_step(const PadCropTransform* crop, const TransformPtr& t) {
  const TransformArgs args = float_transform_args(*t);
  const auto fill = geo_fill(args, "fill");
  if (args.get_string("padding_mode") != "constant")
    throw TransformTypeError(t->repr() + " on a float image: fastloop pads float images with a constant fill only");
  return [crop, t, fill](at::Tensor& image, Draws& draws) {
    const PadCropParams p = crop->pad_crop_draw(image.size(1), image.size(2), draws);
    if (!p.changes) return;
    const Padding& pad = p.padding;
    if (pad.left || pad.top || pad.right || pad.bottom) {
      const at::Tensor padded = at::constant_pad_nd(image, {pad.left, pad.right, pad.top, pad.bottom}, 0.0);
      if (fill && !fill->empty()) {  // _pad_with_vector_fill: the new border gets each channel's value
        at::Tensor mask = at::constant_pad_nd(at::zeros({1, image.size(1), image.size(2)}, image.options()),
                                              {pad.left, pad.right, pad.top, pad.bottom}, 1.0);
        const at::Tensor values = at::tensor(*fill, image.options()).view({-1, 1, 1});
        image = at::where(mask.to(at::kBool), values.expand_as(padded), padded);
      } else {
        image = padded;
      }
    }
    image = crop_float(image, p.top, p.left, p.height, p.width);
  };
}

FloatStep normalize_step(const NormalizeTransform* n) {
  return [n](at::Tensor& image, Draws&) {
    const auto dtype = image.scalar_type();
    const at::Tensor mean = at::tensor(n->mean(), at::kDouble).to(dtype).view({-1, 1, 1});
    const at::Tensor std = at::tensor(n->std(), at::kDouble).to(dtype).view({-1, 1, 1});
    image = image.sub(mean).div_(std);
  };
}

FloatStep erasing_step(const RandomErasingTransform* e) {
  return [e](at::Tensor& image, Draws& draws) {
    const int64_t c = image.size(0);
    const ErasingBox box = e->box_draw(c, image.size(1), image.size(2), draws);
    if (!box.erase) return;
    at::Tensor region = image.slice(1, box.top, box.top + box.height).slice(2, box.left, box.left + box.width);
    if (!e->random()) {
      std::vector<double> values;
      for (int64_t k = 0; k < c; ++k) values.push_back(e->value_draw(k, draws));
      // torch.tensor(value): float32 first, then the image's dtype as the slice assignment casts it
      region.copy_(at::tensor(values, at::kDouble).to(at::kFloat).to(image.scalar_type()).view({c, 1, 1}).expand_as(region));
      return;
    }
    std::vector<float> values;  // torch.empty([C, h, w], float32).normal_(), channel-major as erase_output draws them
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < box.height * box.width; ++i) values.push_back(static_cast<float>(e->value_draw(k, draws)));
    region.copy_(at::from_blob(values.data(), {c, box.height, box.width}, at::kFloat).to(image.scalar_type()));
  };
}

FloatStep convert_step(const ConvertTransform* convert) {
  if (convert->dtype() == StageDtype::kUInt8) {
    if (convert->name() != "ToDtype") return [](at::Tensor&, Draws&) {};  // ToImage, PILToTensor: a tensor passes
    throw TransformTypeError(convert->repr() + " after the conversion to float: converting the float image back to "
                             "uint8 is not supported");
  }
  const at::ScalarType dtype = stage_scalar_type(convert->dtype());
  return [dtype](at::Tensor& image, Draws&) { image = image.to(dtype); };  // float to float: a cast, scale or not
}

}  // namespace

const std::vector<std::string>& float_step_names() {
  static const std::vector<std::string> names = {
      "CenterCrop", "ColorJitter", "ConvertImageDtype", "GaussianBlur", "GaussianNoise", "Grayscale",
      "LinearTransformation", "Normalize", "PILToTensor", "RandomAffine", "RandomCrop", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip",
      "RandomInvert", "RandomPerspective", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip", "Resize",
      "ToDtype", "ToImage"};
  return names;
}

FloatStep float_step_make(const TransformPtr& t) {
  const std::string name = spec_parse(t->repr()).at(0).name;
  if (const auto* plan = dynamic_cast<const ResizePlanTransform*>(t.get())) {
    return [plan](at::Tensor& image, Draws& draws) {
      const ResizePlan p = plan->plan(image.size(1), image.size(2), draws);
      if (!p.exact || (p.height == p.out_height && p.width == p.out_width)) {
        image = crop_float(image, p.top, p.left, p.out_height, p.out_width);
      } else {
        image = resize_float(crop_float(image, p.top, p.left, p.height, p.width), p.out_height, p.out_width,
                             p.interpolation, p.antialias);
      }
    };
  }
  if (name == "RandomHorizontalFlip" || name == "RandomVerticalFlip") {
    const int64_t dim = name == "RandomHorizontalFlip" ? 2 : 1;
    return [t, dim](at::Tensor& image, Draws& draws) {
      if (float_draw(t->draw(image.size(1), image.size(2), draws), "flip") != 0.0) image = image.flip({dim}).contiguous();
    };
  }
  if (const auto* crop = dynamic_cast<const PadCropTransform*>(t.get())) return pad_crop_step(crop, t);
  if (name == "ColorJitter") return colour_step(t);
  if (name == "RandomInvert") return coin_step(t, [](const at::Tensor& x) { return 1.0 - x; });
  if (name == "RandomGrayscale") return coin_step(t, [](const at::Tensor& x) { return grey_to(x, x.size(0)); });
  if (name == "Grayscale") {
    const int64_t channels = float_transform_args(*t).get_int("num_output_channels");
    return coin_step(t, [channels](const at::Tensor& x) { return grey_to(x, channels); });
  }
  if (name == "GaussianBlur") {
    const std::vector<int64_t> kernel = float_transform_args(*t).get_ints("kernel_size");
    return [t, kernel](at::Tensor& image, Draws& draws) {
      const double sigma = float_draw(t->draw(image.size(1), image.size(2), draws), "sigma");
      image = blur_float(image, kernel[0], kernel.size() > 1 ? kernel[1] : kernel[0], sigma);
    };
  }
  if (const auto* normalize = dynamic_cast<const NormalizeTransform*>(t.get())) return normalize_step(normalize);
  if (const auto* convert = dynamic_cast<const ConvertTransform*>(t.get())) return convert_step(convert);
  if (const auto* erasing = dynamic_cast<const RandomErasingTransform*>(t.get())) return erasing_step(erasing);
  if (auto warp = float_warp_step(t)) return *warp;
  if (const auto* step = dynamic_cast<const FloatKernelTransform*>(t.get()))
    return [step](at::Tensor& image, Draws& draws) { step->apply_float(image, draws); };
  std::string names;
  for (const auto& n : float_step_names()) names += (names.empty() ? "" : ", ") + n;
  throw TransformTypeError(t->repr() + " on a float image (after the conversion to float) is not supported: fastloop "
                           "runs " + names + " on float images; put it before the conversion, where it runs on uint8");
}

at::Tensor float_image_from_u8(const ImageU8& image, const std::vector<double>& table, at::ScalarType dtype) {
  const int64_t C = image.channels, H = image.height, W = image.width;
  at::Tensor out = at::empty({C, H, W}, at::kDouble);  // the table's values, already rounded to the dtype
  double* o = out.data_ptr<double>();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < H; ++y) {
      const uint8_t* row = image.row(y);
      for (int64_t x = 0; x < W; ++x) o[(c * H + y) * W + x] = table[static_cast<size_t>(c * 256 + row[x * C + c])];
    }
  return out.to(dtype);
}

}  // namespace fastloop
