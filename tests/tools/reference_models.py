"""PyTorch reference definitions of fastloop's models (src/fastloop/models/), for golden files and peers.

State-dict names are identical to the C++ named_parameters()/named_buffers(), so weights move between
Python and C++ by name. The "imagenet" stem is torchvision's model as is; "cifar" changes only the stem.
"""
import torch
from torch import nn
import torch.nn.functional as F
import torchvision

MODEL_NAMES = ["resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "small_cnn"]


def _resnet(name, stem, in_channels, num_classes):
    model = getattr(torchvision.models, name)(weights=None, num_classes=num_classes)
    if stem == "cifar":
        # kuangliu/pytorch-cifar: 3x3 stride-1 conv1 and no max-pool, so 32 px inputs keep their
        # resolution into layer1 (4x4 before the pool instead of 1x1).
        model.conv1 = nn.Conv2d(in_channels, 64, 3, stride=1, padding=1, bias=False)
        model.maxpool = nn.Identity()
    elif in_channels != 3:
        model.conv1 = nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False)
    nn.init.kaiming_normal_(model.conv1.weight, mode="fan_out", nonlinearity="relu")
    return model


def _mobilenet_v2(stem, in_channels, num_classes, dropout):
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
               [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
    first_stride = 2
    if stem == "cifar":
        # kuangliu/pytorch-cifar's MobileNetV2: stride 1 in the first conv and in the 24-channel stage,
        # so 32 px inputs end at 4x4 instead of 1x1.
        setting[1][3] = 1
        first_stride = 1
    model = torchvision.models.mobilenet_v2(
        weights=None, num_classes=num_classes, dropout=dropout, inverted_residual_setting=setting)
    model.features[0][0] = nn.Conv2d(in_channels, 32, 3, stride=first_stride, padding=1, bias=False)
    nn.init.kaiming_normal_(model.features[0][0].weight, mode="fan_out")
    return model


def _conv_bn_relu(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]


class SmallCNN(nn.Module):
    """Residual CNN for 28-32 px images: two stages, each conv + max-pool + a residual pair of convs."""

    def __init__(self, in_channels=1, num_classes=10, widths=(16, 32, 96)):  # as SmallCNNOptions
        super().__init__()
        w0, w1, w2 = widths
        self.stem = nn.Sequential(*_conv_bn_relu(in_channels, w0))
        self.stage1 = nn.Sequential(*_conv_bn_relu(w0, w1), nn.MaxPool2d(2))
        self.res1 = nn.Sequential(*_conv_bn_relu(w1, w1), *_conv_bn_relu(w1, w1))
        self.stage2 = nn.Sequential(*_conv_bn_relu(w1, w2), nn.MaxPool2d(2))
        self.res2 = nn.Sequential(*_conv_bn_relu(w2, w2), *_conv_bn_relu(w2, w2))
        self.fc = nn.Linear(w2, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.stage1(self.stem(x))
        x = x + self.res1(x)
        x = self.stage2(x)
        x = x + self.res2(x)
        return self.fc(torch.flatten(F.adaptive_max_pool2d(x, 1), 1))


def model_stems(name):
    """Stems a model accepts; SmallCNN is made for small images only (as fastloop::model_stems)."""
    return ["cifar"] if name == "small_cnn" else ["cifar", "imagenet"]


def make_model(name, stem="cifar", in_channels=3, num_classes=10, dropout=0.2):
    """The Python twin of fastloop::model_make (same names, same defaults)."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; valid: {', '.join(MODEL_NAMES)}")
    if stem not in model_stems(name):
        raise ValueError(f"unknown stem {stem!r} for {name}; valid: {', '.join(model_stems(name))}")
    if name.startswith("resnet"):
        return _resnet(name, stem, in_channels, num_classes)
    if name == "mobilenet_v2":
        return _mobilenet_v2(stem, in_channels, num_classes, dropout)
    return SmallCNN(in_channels, num_classes)
