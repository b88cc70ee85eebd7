// Test-time augmentation in evaluation, as airbench's infer(): "flip" averages the logits of each image and
// its mirror; "flip-translate" averages that (weight 1/2) with the same for the image shifted by one pixel
// up-left and down-right (1/4 each, reflect padding). Costs 2x and 6x the forward passes.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/models/classifier.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace fastloop {

/// The allowed values of `--tta`: auto, off, flip, flip-translate.
const std::vector<std::string>& tta_modes();

/// The mode `data.tta` means for a run on `data`: "auto" is "flip" where a recipe measured that it pays — the
/// default recipe's Fashion-MNIST trained with the built-in flip — and "off" everywhere else (one forward per
/// image, as a torchvision user's evaluation); any other value is itself.
std::string tta_mode(const DataConfig& data);

/// The model's float32 logits for `images` ([B, C, H, W]) under test-time augmentation `mode` (off, flip or
/// flip-translate); "off" is one forward. Runs under whatever autocast and grad mode the caller set.
at::Tensor tta_logits(ClassifierImpl& model, const at::Tensor& images, const std::string& mode);

} // namespace fastloop
