// airbench94.py's infer_mirror / infer_mirror_translate, op for op: mirror = 0.5 f(x) + 0.5 f(flip(x));
// translate crops [0:H, 0:W] and [2:H+2, 2:W+2] of the reflect-padded (1 px) batch.
#include "fastloop/train/tta.h"

#include <ATen/ATen.h>

#include <vector>

namespace fastloop {
namespace {

at::Tensor logits_of(ClassifierImpl& model, const at::Tensor& images) { return model.forward(images).to(at::kFloat); }

at::Tensor mirror_logits(ClassifierImpl& model, const at::Tensor& images) {
  return 0.5 * logits_of(model, images) + 0.5 * logits_of(model, images.flip(-1));
}

}  // namespace

const std::vector<std::string>& tta_modes() {
  static const std::vector<std::string> modes{"auto", "off", "flip", "flip-translate"};
  return modes;
}

std::string tta_mode(const DataConfig& data) {
  if (data.tta != "auto") return data.tta;
  // Measured on the default recipe alone (+0.23 points for twice the final evaluation's forwards): Fashion-MNIST
  // trained with the built-in flip. Anywhere else a user asks for it (--tta flip), as torchvision's references do.
  const bool fashion_mnist = data.source == "fashion-mnist" || data.source.rfind("fashion-mnist:", 0) == 0;
  return fashion_mnist && data.transform.empty() && data.augment && data.flip ? "flip" : "off";
}

at::Tensor tta_logits(ClassifierImpl& model, const at::Tensor& images, const std::string& mode) {
  if (mode == "off") return logits_of(model, images);
  TORCH_CHECK(mode == "flip" || mode == "flip-translate", "test-time augmentation '", mode,
              "' is not one of off, flip, flip-translate");
  const at::Tensor mirror = mirror_logits(model, images);
  if (mode == "flip") return mirror;
  const int64_t H = images.size(2), W = images.size(3);
  const auto format = images.suggest_memory_format();  // keep the batches' layout for the convolutions
  const at::Tensor padded = at::reflection_pad2d(images, {1, 1, 1, 1});
  const at::Tensor up_left = padded.narrow(2, 0, H).narrow(3, 0, W).contiguous(format);
  const at::Tensor down_right = padded.narrow(2, 2, H).narrow(3, 2, W).contiguous(format);
  const at::Tensor translated = at::stack({mirror_logits(model, up_left), mirror_logits(model, down_right)}).mean(0);
  return 0.5 * mirror + 0.5 * translated;
}

} // namespace fastloop
