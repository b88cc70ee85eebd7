// GaussianNoise as transforms.v2 defines it (mean, sigma, clip): one standard normal per value, drawn in the
// [C, H, W] order torch.randn_like fills the image's shape (Box-Muller from the sample's draws: torch's randn as a
// distribution), then gaussian_noise_image's arithmetic. On uint8: noise = (mean * 255 + z * (sigma * 255))
// truncated to int16, added, clamped to [0, 255] (or wrapped, clip=False); on float (after the conversion):
// image + (mean + z * sigma), clamped to [0, 1].
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/float_step.h"
#include "fastloop/data/transforms/spec.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace fastloop {
namespace {

class GaussianNoise final : public FloatKernelTransform {
 public:
  GaussianNoise(double mean, double sigma, bool clip) : mean_(mean), sigma_(sigma), clip_(clip) {}
  std::string repr() const override {
    return "GaussianNoise(mean=" + float_repr(mean_) + ", sigma=" + float_repr(sigma_) + ", clip=" +
           (clip_ ? "True" : "False") + ")";
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through

  void apply(ImageU8& image, Draws& draws, TransformScratch&) const override {
    const int64_t C = image.channels, H = image.height, W = image.width;
    const auto mean = static_cast<float>(mean_ * 255), sigma = static_cast<float>(sigma_ * 255);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y) {
        uint8_t* row = image.row(y);
        for (int64_t x = 0; x < W; ++x) {
          const float noise = mean + normal(draws) * sigma;  // float32, as the tensor expression
          const int sum = row[x * C + c] + static_cast<int16_t>(noise);
          row[x * C + c] = static_cast<uint8_t>(clip_ ? std::clamp(sum, 0, 255) : sum);
        }
      }
  }

  void apply_float(at::Tensor& image, Draws& draws) const override {
    std::vector<float> z(static_cast<size_t>(image.numel()));
    for (float& v : z) v = normal(draws);
    const at::Tensor randn = at::from_blob(z.data(), image.sizes(), at::kFloat).to(image.scalar_type());
    image = image + (mean_ + randn * sigma_);
    if (clip_) image = at::clamp(image, 0, 1);
  }

  /// The standard normals of a height x width RGB image, [C, H, W] order (for the tests' replays).
  TransformDraw draw(int64_t height, int64_t width, Draws& draws) const override {
    std::vector<double> z(static_cast<size_t>(3 * height * width));
    for (double& v : z) v = normal(draws);
    return {{"noise", z}};
  }

 private:
  // torch.randn's float32 value as a distribution: Box-Muller on two uniforms.
  static float normal(Draws& draws) {
    const double u1 = 1.0 - draws.uniform(0.0, 1.0), u2 = draws.uniform(0.0, 1.0);
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
  }
  double mean_, sigma_;
  bool clip_;
};

}  // namespace

void transforms_register_noise(TransformRegistry& registry) {
  registry.add("GaussianNoise", {{"mean", value_float(0.0)}, {"sigma", value_float(0.1)}, {"clip", value_bool(true)}},
               [](const TransformArgs& args) -> TransformPtr {
                 const double sigma = args.get_double("sigma");
                 if (sigma < 0) throw InputError("sigma shouldn't be negative. Got " + float_repr(sigma));
                 return std::make_shared<GaussianNoise>(args.get_double("mean"), sigma, args.get_bool("clip"));
               });
}

}  // namespace fastloop
