// ResNet blocks and network, registered under torchvision's names (conv1, bn1, layerN.M.convK,
// layerN.M.downsample.{0,1}, fc) and initialised as torchvision does with zero_init_residual=false.
#include "fastloop/models/resnet.h"

#include "fastloop/models/fold_bn.h"
#include "fastloop/models/init.h"


namespace fastloop {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  // No bias: every conv here feeds a BatchNorm whose shift makes a bias redundant.
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

/// The projection shortcut when the block changes resolution or width; null for the identity.
nn::Sequential make_downsample(int64_t in, int64_t out, int64_t stride) {
  if (stride == 1 && in == out) return nullptr;
  return nn::Sequential(conv(in, out, 1, stride), FoldableBatchNorm2d(out));
}

template <typename Block>
nn::Sequential make_layer(int64_t& in_planes, int64_t planes, int64_t blocks, int64_t stride) {
  nn::Sequential layer;
  for (int64_t i = 0; i < blocks; ++i) {
    layer->push_back(Block(in_planes, planes, i == 0 ? stride : 1));
    in_planes = planes * Block::Impl::kExpansion;
  }
  return layer;
}

} // namespace

BasicBlockImpl::BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride) {
  // Registration order is torchvision's (conv1, bn1, conv2, bn2, downsample): state dicts are ordered.
  conv1 = register_module("conv1", conv(in_planes, planes, 3, stride));
  bn1 = register_module("bn1", FoldableBatchNorm2d(planes));
  conv2 = register_module("conv2", conv(planes, planes, 3, 1));
  bn2 = register_module("bn2", FoldableBatchNorm2d(planes));
  downsample = make_downsample(in_planes, planes * kExpansion, stride);
  if (downsample) register_module("downsample", downsample);
}

at::Tensor BasicBlockImpl::forward(at::Tensor x) {
  auto out = bn1(conv1(x)).relu_();
  out = bn2(conv2(out));
  out += downsample ? downsample->forward(x) : x;
  return out.relu_();
}

BottleneckImpl::BottleneckImpl(int64_t in_planes, int64_t planes, int64_t stride) {
  conv1 = register_module("conv1", conv(in_planes, planes, 1, 1));
  bn1 = register_module("bn1", FoldableBatchNorm2d(planes));
  conv2 = register_module("conv2", conv(planes, planes, 3, stride));
  bn2 = register_module("bn2", FoldableBatchNorm2d(planes));
  conv3 = register_module("conv3", conv(planes, planes * kExpansion, 1, 1));
  bn3 = register_module("bn3", FoldableBatchNorm2d(planes * kExpansion));
  downsample = make_downsample(in_planes, planes * kExpansion, stride);
  if (downsample) register_module("downsample", downsample);
}

at::Tensor BottleneckImpl::forward(at::Tensor x) {
  auto out = bn1(conv1(x)).relu_();
  out = bn2(conv2(out)).relu_();
  out = bn3(conv3(out));
  out += downsample ? downsample->forward(x) : x;
  return out.relu_();
}

ResNetImpl::ResNetImpl(const ResNetOptions& options_) : options(options_) {
  TORCH_CHECK(options.stem() == "cifar" || options.stem() == "imagenet",
              "ResNet stem '", options.stem(), "' is unknown; use 'cifar' or 'imagenet'");
  TORCH_CHECK(options.in_channels() > 0 && options.num_classes() > 0,
              "ResNet needs in_channels and num_classes > 0, got ", options.in_channels(), " and ",
              options.num_classes());
  const bool cifar = options.stem() == "cifar";
  const int64_t w = options.width_delta();
  TORCH_CHECK(64 + w > 0, "ResNet width_delta ", w, " leaves no channels");
  conv1 = register_module("conv1", conv(options.in_channels(), 64 + w, cifar ? 3 : 7, cifar ? 1 : 2));
  bn1 = register_module("bn1", FoldableBatchNorm2d(64 + w));

  int64_t in_planes = 64 + w;
  auto build = [&](int64_t b1, int64_t b2, int64_t b3, int64_t b4, bool bottleneck) {
    auto layer = [&](int64_t planes, int64_t blocks, int64_t stride) {
      return bottleneck ? make_layer<Bottleneck>(in_planes, planes, blocks, stride)
                        : make_layer<BasicBlock>(in_planes, planes, blocks, stride);
    };
    layer1 = register_module("layer1", layer(64 + w, b1, 1));
    layer2 = register_module("layer2", layer(128 + w, b2, 2));
    layer3 = register_module("layer3", layer(256 + w, b3, 2));
    layer4 = register_module("layer4", layer(512 + w, b4, 2));
  };
  switch (options.depth()) {
    case 18: build(2, 2, 2, 2, false); break;
    case 34: build(3, 4, 6, 3, false); break;
    case 50: build(3, 4, 6, 3, true); break;
    case 101: build(3, 4, 23, 3, true); break;
    default: TORCH_CHECK(false, "ResNet depth ", options.depth(), " is unsupported; use 18, 34, 50 or 101");
  }
  // PyTorch's default Linear init (kaiming_uniform a=sqrt(5), uniform bias) is what torchvision keeps.
  fc = register_module("fc", nn::Linear(in_planes, options.num_classes()));

  init_convs_and_batchnorms(*this);
}

at::Tensor ResNetImpl::forward(at::Tensor x) {
  x = bn1(conv1(x)).relu_();
  // Every list two long, as torchvision's: the ONNX exporter cannot type a pool traced with [3], [2], [1].
  if (options.stem() == "imagenet") x = torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1}, {1, 1});
  x = layer1->forward(x);
  x = layer2->forward(x);
  x = layer3->forward(x);
  x = layer4->forward(x);
  x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc(x);
}

} // namespace fastloop
