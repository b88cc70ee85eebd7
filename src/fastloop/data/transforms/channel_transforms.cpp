// The transforms of transforms.v2 that pass a sample through or only rearrange its channels: Identity and
// ToPureTensor (fastloop's batches hold plain tensors already; the pipeline records ToPureTensor so that a
// detection loader's target dicts hold plain tensors too, as torchvision's do), RGB (grayscale_to_rgb: a grey
// image's level copied into three channels, an image of 3 or more channels as it is) and
// RandomChannelPermutation (the channels in a uniformly drawn order, as torch.randperm draws one).
#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/families.h"
#include "fastloop/data/transforms/functional/color.h"

#include <algorithm>
#include <array>
#include <memory>

namespace fastloop {
namespace {

// Identity and ToPureTensor: nothing to do to pixels or targets, wherever they stand.
class PassThrough final : public Transform {
 public:
  explicit PassThrough(std::string name) : name_(std::move(name)) {}
  std::string repr() const override { return name_ + "()"; }
  void apply(ImageU8&, Draws&, TransformScratch&) const override {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }
  bool touches_pixels() const override { return false; }

 private:
  std::string name_;
};

class Rgb final : public Transform {
 public:
  std::string repr() const override { return "RGB()"; }
  void apply(ImageU8& image, Draws&, TransformScratch&) const override {
    if (image.channels >= 3) return;  // torchvision: "Image already has RGB channels"
    rgb_to_grayscale_u8(image, 3);    // a grey image spread to 3 channels; 2 channels raise as torchvision's
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }
};

class RandomChannelPermutation final : public Transform {
 public:
  static constexpr int64_t kMaxChannels = 4;
  std::string repr() const override { return "RandomChannelPermutation()"; }
  void apply(ImageU8& image, Draws& draws, TransformScratch&) const override {
    const std::array<int64_t, kMaxChannels> order = permutation(image.channels, draws);
    const int64_t channels = image.channels, pixels = image.height * image.width;
    std::array<uint8_t, kMaxChannels> pixel{};
    uint8_t* p = image.data();
    for (int64_t i = 0; i < pixels; ++i, p += channels) {
      std::copy(p, p + channels, pixel.begin());
      for (int64_t c = 0; c < channels; ++c) p[c] = pixel[static_cast<size_t>(order[static_cast<size_t>(c)])];
    }
  }
  TransformDraw draw(int64_t, int64_t, Draws& draws) const override {
    const auto order = permutation(3, draws);
    return {{"permutation", {static_cast<double>(order[0]), static_cast<double>(order[1]), static_cast<double>(order[2])}}};
  }
  TargetSupport target_support() const override { return TargetSupport::kPixels; }

 private:
  // torch.randperm(channels), as the colour transforms draw it.
  static std::array<int64_t, kMaxChannels> permutation(int64_t channels, Draws& draws) {
    if (channels > kMaxChannels)
      throw InputError("RandomChannelPermutation: an image of " + std::to_string(channels) + " channels (at most " +
                       std::to_string(kMaxChannels) + ")");
    std::array<int64_t, kMaxChannels> order{};
    torch_randperm(draws, channels, order.data());
    return order;
  }
};

}  // namespace

void transforms_register_channels(TransformRegistry& registry) {
  for (const char* name : {"Identity", "ToPureTensor"})
    registry.add(name, {}, [name](const TransformArgs&) -> TransformPtr { return std::make_shared<PassThrough>(name); });
  registry.add("RGB", {}, [](const TransformArgs&) -> TransformPtr { return std::make_shared<Rgb>(); });
  registry.add("RandomChannelPermutation", {},
               [](const TransformArgs&) -> TransformPtr { return std::make_shared<RandomChannelPermutation>(); });
}

}  // namespace fastloop
