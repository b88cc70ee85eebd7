// stem_whitening_configure(): small_cnn's stem weight found by name, whitened from the split's first images, frozen.
#include "fastloop/train/stem_whitening.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/augment.h"
#include "fastloop/models/whiten.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace fastloop {

at::Tensor whitening_images(const Dataset& train, int64_t count) {
  count = std::min(count, train.size());
  TORCH_CHECK(count > 0, "whitening_images: the training split has no images");
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  at::Tensor images = at::empty({count, train.channels(), train.height(), train.width()}, at::kFloat);
  at::Tensor labels = at::empty({count}, at::kLong);
  batch_assemble(train, indices.data(), count, AugmentOptions{}, /*seed=*/0, /*epoch=*/0, images, labels);
  return images;
}

void stem_whitening_configure(torch::nn::Module& model, const Dataset& train, const std::string& model_name,
                              bool initialise) {
  auto* conv = model.named_modules().find("stem.0");
  auto* stem = conv ? dynamic_cast<torch::nn::Conv2dImpl*>(conv->get()) : nullptr;
  if (model_name != "small_cnn" || !stem) {
    throw InputError("--whiten-stem: model '" + model_name + "' has no small_cnn stem (stem.0, a 3x3 conv) to "
                     "whiten; drop the flag or use --model small_cnn");
  }
  at::Tensor weight = stem->weight;  // [w0, in_channels, 3, 3]
  if (initialise) {
    const at::Tensor filters =
        patch_whitening_filters(whitening_images(train), weight.size(2), weight.size(0), kWhiteningEps);
    at::NoGradGuard no_grad;
    weight.slice(0, 0, filters.size(0)).copy_(filters);
  }
  weight.set_requires_grad(false);
}

} // namespace fastloop
