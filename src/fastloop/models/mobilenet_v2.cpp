// MobileNetV2 blocks and network, built from torchvision's (t, c, n, s) table and initialised as
// torchvision does: kaiming-normal fan-out convs, unit BN, Linear weights N(0, 0.01) with zero bias.
#include "fastloop/models/mobilenet_v2.h"

#include "fastloop/models/fold_bn.h"
#include "fastloop/models/init.h"

#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include <array>

namespace fastloop {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv_for(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups) {
  // No bias: BatchNorm follows every conv.
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                        .stride(stride).padding(kernel / 2).groups(groups).bias(false));
}

struct StageSpec {
  int64_t expand_ratio, channels, blocks, stride;  // torchvision's t, c, n, s
};

constexpr int64_t kFirstChannels = 32;
constexpr int64_t kLastChannels = 1280;

} // namespace

ConvBNReLU6Impl::ConvBNReLU6Impl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups) {
  conv = register_module("0", conv_for(in, out, kernel, stride, groups));
  bn = register_module("1", FoldableBatchNorm2d(out));
}

at::Tensor ConvBNReLU6Impl::forward(at::Tensor x) {
  auto y = bn(conv(x));
  return torch::hardtanh_(y, 0.0, 6.0);  // ReLU6, in place like torchvision's
}

InvertedResidualImpl::InvertedResidualImpl(int64_t in, int64_t out, int64_t stride, int64_t expand_ratio)
    : use_residual(stride == 1 && in == out) {
  const int64_t hidden = in * expand_ratio;
  conv = nn::Sequential();
  if (expand_ratio != 1) conv->push_back(ConvBNReLU6(in, hidden, 1, 1, 1));
  conv->push_back(ConvBNReLU6(hidden, hidden, 3, stride, /*groups=*/hidden));  // depthwise
  conv->push_back(nn::Conv2d(nn::Conv2dOptions(hidden, out, 1).bias(false)));  // linear bottleneck
  conv->push_back(FoldableBatchNorm2d(out));
  register_module("conv", conv);
}

at::Tensor InvertedResidualImpl::forward(at::Tensor x) {
  return use_residual ? x + conv->forward(x) : conv->forward(x);
}

MobileNetV2Impl::MobileNetV2Impl(const MobileNetV2Options& options_) : options(options_) {
  TORCH_CHECK(options.stem() == "cifar" || options.stem() == "imagenet",
              "MobileNetV2 stem '", options.stem(), "' is unknown; use 'cifar' or 'imagenet'");
  TORCH_CHECK(options.in_channels() > 0 && options.num_classes() > 0,
              "MobileNetV2 needs in_channels and num_classes > 0, got ", options.in_channels(), " and ",
              options.num_classes());
  TORCH_CHECK(options.dropout() >= 0.0 && options.dropout() < 1.0,
              "MobileNetV2 dropout must be in [0, 1), got ", options.dropout());
  const bool cifar = options.stem() == "cifar";
  const std::array<StageSpec, 7> stages{{{1, 16, 1, 1},
                                         {6, 24, 2, cifar ? 1 : 2},
                                         {6, 32, 3, 2},
                                         {6, 64, 4, 2},
                                         {6, 96, 3, 1},
                                         {6, 160, 3, 2},
                                         {6, 320, 1, 1}}};

  const int64_t w = options.width_delta();
  TORCH_CHECK(16 + w > 0, "MobileNetV2 width_delta ", w, " leaves no channels");
  features = nn::Sequential();
  features->push_back(ConvBNReLU6(options.in_channels(), kFirstChannels + w, 3, cifar ? 1 : 2, 1));
  int64_t in = kFirstChannels + w;
  for (const auto& s : stages) {
    for (int64_t i = 0; i < s.blocks; ++i) {
      features->push_back(InvertedResidual(in, s.channels + w, i == 0 ? s.stride : 1, s.expand_ratio));
      in = s.channels + w;
    }
  }
  features->push_back(ConvBNReLU6(in, kLastChannels + w, 1, 1, 1));
  register_module("features", features);

  nn::Linear linear(kLastChannels + w, options.num_classes());
  classifier = register_module("classifier", nn::Sequential(nn::Dropout(options.dropout()), linear));

  init_convs_and_batchnorms(*this);
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, 0.01);
  linear->bias.zero_();
}

at::Tensor MobileNetV2Impl::forward(at::Tensor x) {
  x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
  return classifier->forward(x);
}

} // namespace fastloop
