// torchvision's colour transforms (ColorJitter, Grayscale, RandomGrayscale, RandomInvert, RandomPosterize,
// RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize) over the kernels of
// functional/color.h and functional/histogram.h, with torchvision's signatures, checks and draws.
#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/color.h"
#include "fastloop/data/transforms/functional/histogram.h"
#include "fastloop/data/transforms/spec.h"

#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

namespace fastloop {
namespace {

/// torchvision's _RandomApplyTransform over one kernel: torch.rand(1) >= p skips it.
class RandomApplyKernel final : public Transform {
 public:
  using Kernel = std::function<void(ImageU8&, TransformScratch&)>;
  RandomApplyKernel(std::string repr, double p, Kernel kernel)
      : repr_(std::move(repr)), p_(p), kernel_(std::move(kernel)) {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override { return repr_; }
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    if (applies(draws)) kernel_(image, scratch);
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override {
    return {{"apply", {applies(draws) ? 1.0 : 0.0}}};
  }

 private:
  bool applies(Draws& draws) const { return !(torch_rand(draws) >= static_cast<float>(p_)); }  // p as float32
  std::string repr_;
  double p_;
  Kernel kernel_;
};

/// A factor's range after ColorJitter._check_input; nullopt where torchvision keeps None (no draw).
using FactorRange = std::optional<std::array<double, 2>>;

FactorRange jitter_range(const TransformArgs& args, const char* name, double center, double lo, double hi,
                         bool clip_first_on_zero) {
  const TransformValue& value = args.get(name);
  std::array<double, 2> range{};
  if (value.kind == TransformValue::Kind::kNone) return std::nullopt;
  if (value.kind == TransformValue::Kind::kInt || value.kind == TransformValue::Kind::kFloat) {
    if (value.number < 0) throw InputError(std::string("If ") + name + " is a single number, it must be non negative.");
    range = {center - value.number, center + value.number};
    if (clip_first_on_zero) range[0] = std::max(range[0], 0.0);
  } else if (value.kind == TransformValue::Kind::kList && value.list.size() == 2) {
    const auto pair = args.get_doubles(name);
    range = {pair[0], pair[1]};
  } else {
    throw TransformTypeError(std::string(name) + "=" + value_repr(value) +
                             " should be a single number or a sequence with length 2.");
  }
  if (!(lo <= range[0] && range[0] <= range[1] && range[1] <= hi)) {
    std::string bound = lo == 0 ? std::string("0") : float_repr(lo);  // torchvision's bound: (0, inf), (-0.5, 0.5)
    bound.insert(0, 1, '(');
    bound += ", " + float_repr(hi) + ")";
    throw InputError(std::string(name) + " values should be between " + bound + " and increasing, but got [" +
                     float_repr(range[0]) + ", " + float_repr(range[1]) + "].");
  }
  if (range[0] == center && range[1] == center) return std::nullopt;
  return range;
}

/// ColorJitter: randperm(4) for the order, then one uniform factor per range given, in the order brightness,
/// contrast, saturation, hue (torchvision's make_params).
class ColorJitter final : public Transform {
 public:
  explicit ColorJitter(std::array<FactorRange, 4> ranges) : ranges_(ranges) {}

  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override {
    static const char* const kNames[] = {"brightness", "contrast", "saturation", "hue"};
    std::string text = "ColorJitter(";
    bool first = true;
    for (int k = 0; k < 4; ++k) {
      if (!ranges_[k]) continue;
      text += (first ? "" : ", ") + std::string(kNames[k]) + "=(" + float_repr((*ranges_[k])[0]) + ", " +
              float_repr((*ranges_[k])[1]) + ")";
      first = false;
    }
    return text + ")";
  }

  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    (void)scratch;
    const Params params = make_params(draws);
    for (int64_t fn : params.order) {
      if (!params.factors[fn]) continue;
      const double f = *params.factors[fn];
      if (fn == 0) adjust_brightness_u8(image, f);
      else if (fn == 1) adjust_contrast_u8(image, f);
      else if (fn == 2) adjust_saturation_u8(image, f);
      else adjust_hue_u8(image, f);
    }
  }

  TransformDraw draw(int64_t, int64_t, Draws& draws) const override {
    const Params params = make_params(draws);
    TransformDraw out{{"fn_idx", {}}};
    for (int64_t fn : params.order) out[0].second.push_back(static_cast<double>(fn));
    static const char* const kNames[] = {"brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"};
    for (int k = 0; k < 4; ++k)
      out.push_back({kNames[k], params.factors[k] ? std::vector<double>{*params.factors[k]} : std::vector<double>{}});
    return out;
  }

 private:
  struct Params {
    int64_t order[4];
    std::optional<double> factors[4];
  };
  Params make_params(Draws& draws) const {
    Params params;
    torch_randperm(draws, 4, params.order);
    for (int k = 0; k < 4; ++k)
      if (ranges_[k]) params.factors[k] = torch_uniform(draws, (*ranges_[k])[0], (*ranges_[k])[1]);
    return params;
  }
  std::array<FactorRange, 4> ranges_;
};

class Grayscale final : public Transform {
 public:
  explicit Grayscale(int64_t num_output_channels) : num_output_channels_(num_output_channels) {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override {
    return "Grayscale(num_output_channels=" + std::to_string(num_output_channels_) + ")";
  }
  void apply(ImageU8& image, Draws&, TransformScratch&) const override {
    rgb_to_grayscale_u8(image, num_output_channels_);
  }

 private:
  int64_t num_output_channels_;
};



} // namespace

void transforms_register_color(TransformRegistry& registry) {
  const TransformValue none;
  registry.add("ColorJitter", {{"brightness", none}, {"contrast", none}, {"saturation", none}, {"hue", none}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double inf = std::numeric_limits<double>::infinity();
                 return std::make_shared<ColorJitter>(std::array<FactorRange, 4>{
                     jitter_range(args, "brightness", 1.0, 0.0, inf, true),
                     jitter_range(args, "contrast", 1.0, 0.0, inf, true),
                     jitter_range(args, "saturation", 1.0, 0.0, inf, true),
                     jitter_range(args, "hue", 0.0, -0.5, 0.5, false)});
               });
  registry.add("Grayscale", {{"num_output_channels", value_int(1)}}, [](const TransformArgs& args) -> TransformPtr {
    const int64_t n = args.get_int("num_output_channels");
    if (n != 1 && n != 3) throw InputError("num_output_channels must be 1 or 3, got " + std::to_string(n) + ".");
    return std::make_shared<Grayscale>(n);
  });
  registry.add("RandomGrayscale", {{"p", value_float(0.1)}}, [](const TransformArgs& args) -> TransformPtr {
    const double p = random_apply_p(args);
    // make_params reads the input's channels: grey stays grey (a copy), RGB becomes 3 equal channels.
    return std::make_shared<RandomApplyKernel>("RandomGrayscale(p=" + float_repr(p) + ")", p,
                                               [](ImageU8& image, TransformScratch&) {
                                                 rgb_to_grayscale_u8(image, image.channels);
                                               });
  });
  const auto simple = [&](const char* name, void (*kernel)(ImageU8&)) {
    registry.add(name, {{"p", value_float(0.5)}}, [name, kernel](const TransformArgs& args) -> TransformPtr {
      const double p = random_apply_p(args);
      return std::make_shared<RandomApplyKernel>(std::string(name) + "(p=" + float_repr(p) + ")", p,
                                                 [kernel](ImageU8& image, TransformScratch&) { kernel(image); });
    });
  };
  simple("RandomInvert", invert_u8);
  simple("RandomAutocontrast", autocontrast_u8);
  simple("RandomEqualize", equalize_u8);
  registry.add("RandomPosterize", {param_required("bits"), {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const int64_t bits = args.get_int("bits");
                 check_posterize_bits(bits);
                 const double p = random_apply_p(args);
                 return std::make_shared<RandomApplyKernel>(
                     "RandomPosterize(bits=" + std::to_string(bits) + ", p=" + float_repr(p) + ")", p,
                     [bits](ImageU8& image, TransformScratch&) { posterize_u8(image, bits); });
               });
  registry.add("RandomSolarize", {param_required("threshold"), {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double threshold = args.get_double("threshold");
                 check_solarize_threshold(threshold);
                 const double p = random_apply_p(args);
                 return std::make_shared<RandomApplyKernel>(
                     "RandomSolarize(threshold=" + value_repr(args.get("threshold")) + ", p=" + float_repr(p) + ")", p,
                     [threshold](ImageU8& image, TransformScratch&) { solarize_u8(image, threshold); });
               });
  registry.add("RandomAdjustSharpness", {param_required("sharpness_factor"), {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double factor = args.get_double("sharpness_factor");
                 if (factor < 0)
                   throw InputError("sharpness_factor (" + float_repr(factor) + ") is not non-negative.");
                 const double p = random_apply_p(args);
                 return std::make_shared<RandomApplyKernel>(
                     "RandomAdjustSharpness(sharpness_factor=" + value_repr(args.get("sharpness_factor")) +
                         ", p=" + float_repr(p) + ")",
                     p, [factor](ImageU8& image, TransformScratch& scratch) {
                       adjust_sharpness_u8(image, factor, scratch);
                     });
               });
}

} // namespace fastloop
