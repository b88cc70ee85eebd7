// RandomPhotometricDistort, SSD's colour augmentation: brightness, contrast (before or after saturation and hue),
// saturation and hue, each applied with probability p with a factor drawn as ColorJitter draws it, then with
// probability p a random permutation of the channels. Draws in torchvision's make_params order, kernels of
// functional/color.h; it changes pixel values only, so boxes and masks pass through.
#include "fastloop/data/transforms/detection_transforms.h"

#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/functional/color.h"
#include "fastloop/data/transforms/geometry_args.h"

#include <array>
#include <memory>
#include <optional>
#include <utility>

namespace fastloop {
namespace {

constexpr int64_t kMaxChannels = 4;

// v2.functional.permute_channels: output channel c is input channel permutation[c] (image[:, permutation]).
void permute_channels_u8(ImageU8& image, const int64_t* permutation) {
  const int64_t channels = image.channels;
  uint8_t pixel[kMaxChannels];
  uint8_t* p = image.data();
  for (int64_t i = 0, n = image.height * image.width; i < n; ++i, p += channels) {
    for (int64_t c = 0; c < channels; ++c) pixel[c] = p[permutation[c]];
    for (int64_t c = 0; c < channels; ++c) p[c] = pixel[c];
  }
}

class RandomPhotometricDistort final : public Transform {
 public:
  RandomPhotometricDistort(const TransformArgs& args, std::array<std::array<double, 2>, 4> ranges, double p)
      : ranges_(ranges), p_(p), repr_(geo_repr(args, {"brightness", "contrast", "saturation", "hue", "p"})) {}
  std::string repr() const override { return repr_; }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }
  void apply(ImageU8& image, Draws& draws, TransformScratch&) const override {
    const Params params = make_params(image.channels, draws);
    const auto& f = params.factors;
    if (f[0]) adjust_brightness_u8(image, *f[0]);
    if (f[1] && params.contrast_before) adjust_contrast_u8(image, *f[1]);
    if (f[2]) adjust_saturation_u8(image, *f[2]);
    if (f[3]) adjust_hue_u8(image, *f[3]);
    if (f[1] && !params.contrast_before) adjust_contrast_u8(image, *f[1]);
    if (params.permutes) {
      if (image.channels > kMaxChannels)
        throw InputError("RandomPhotometricDistort: an image of " + std::to_string(image.channels) + " channels");
      permute_channels_u8(image, params.permutation);
    }
  }
  /// The draws for a 3-channel image (draw() does not see the image; the permutation has one entry per channel).
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override {
    const Params params = make_params(3, draws);
    static const char* const kNames[] = {"brightness_factor", "contrast_factor", "saturation_factor", "hue_factor"};
    TransformDraw out;
    for (int k = 0; k < 4; ++k)
      out.push_back({kNames[k], params.factors[k] ? std::vector<double>{*params.factors[k]} : std::vector<double>{}});
    out.push_back({"contrast_before", {params.contrast_before ? 1.0 : 0.0}});
    std::vector<double> permutation;
    if (params.permutes) permutation.assign(params.permutation, params.permutation + 3);
    out.push_back({"channel_permutation", permutation});
    return out;
  }

 private:
  struct Params {
    std::optional<double> factors[4];
    bool contrast_before = false;
    bool permutes = false;
    int64_t permutation[kMaxChannels] = {0, 1, 2, 3};
  };
  // torch.rand(1) < p then the factor, for brightness, contrast, saturation and hue in turn; torch.rand(()) < 0.5
  // for the contrast's place; torch.rand(1) < p then torch.randperm(channels).
  Params make_params(int64_t channels, Draws& draws) const {
    Params params;
    const float p = static_cast<float>(p_);
    for (int k = 0; k < 4; ++k)
      if (torch_rand(draws) < p) params.factors[k] = torch_uniform(draws, ranges_[k][0], ranges_[k][1]);
    params.contrast_before = torch_rand(draws) < 0.5f;
    if (torch_rand(draws) < p) {
      params.permutes = true;
      torch_randperm(draws, std::min(channels, kMaxChannels), params.permutation);
    }
    return params;
  }

  std::array<std::array<double, 2>, 4> ranges_;  // brightness, contrast, saturation, hue
  double p_;
  std::string repr_;
};

}  // namespace

void transforms_register_photometric(TransformRegistry& registry) {
  registry.add("RandomPhotometricDistort",
               {{"brightness", value_floats({0.875, 1.125})},
                {"contrast", value_floats({0.5, 1.5})},
                {"saturation", value_floats({0.5, 1.5})},
                {"hue", value_floats({-0.05, 0.05})},
                {"p", value_float(0.5)}},
               [](const TransformArgs& args) -> TransformPtr {
                 // torchvision checks none of these; a range is indexed [0] and [1] on the first sample.
                 std::array<std::array<double, 2>, 4> ranges{};
                 const char* const names[] = {"brightness", "contrast", "saturation", "hue"};
                 for (int k = 0; k < 4; ++k) {
                   const TransformValue& value = args.get(names[k]);
                   if (value.kind != TransformValue::Kind::kList || value.list.size() != 2)
                     args.fail_type(names[k], "a sequence of two numbers");
                   const std::vector<double> pair = args.get_doubles(names[k]);
                   ranges[static_cast<size_t>(k)] = {pair[0], pair[1]};
                 }
                 return std::make_shared<RandomPhotometricDistort>(args, ranges, args.get_double("p"));
               });
}

}  // namespace fastloop
