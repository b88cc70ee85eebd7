// The transforms of a pipeline's output stage: the conversions to float (ToTensor, ToDtype, ConvertImageDtype;
// PILToTensor and ToImage, which leave uint8 as it is) and Normalize. On uint8 images they do nothing; the
// pipeline (pipeline.h) turns the chain after the last uint8 operation into one table per channel from each
// uint8 value to its output value, computed with torchvision's float operations in their order and dtype,
// and writes each image through it into the batch.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <optional>
#include <string>
#include <vector>

namespace fastloop {

/// The float dtypes of an output stage; kUInt8 when a conversion leaves the image uint8.
enum class StageDtype { kUInt8, kFloat32, kFloat16, kBFloat16, kFloat64 };

/// "torch.float32", ...: torchvision's repr of the dtype.
const char* stage_dtype_repr(StageDtype dtype);

/// ToTensor, PILToTensor, ToImage, ToDtype(dtype, scale), ConvertImageDtype(dtype).
class ConvertTransform : public Transform {
 public:
  ConvertTransform(std::string name, StageDtype dtype, bool scale, bool divide)
      : name_(std::move(name)), dtype_(dtype), scale_(scale), divide_(divide) {}
  /// ToDtype with a dict of dtypes per tv_tensor type: `dtype` the image's (kUInt8 where the dict leaves it),
  /// `mask` and `boxes` the torch dtype names the targets become (nullopt: unchanged; "missing": the dict
  /// names neither the type nor "others", which torchvision refuses for a sample that has it), `repr` the
  /// dict as written.
  ConvertTransform(StageDtype dtype, bool scale, std::optional<std::string> mask, std::optional<std::string> boxes,
                   std::string dict_repr)
      : name_("ToDtype"), dtype_(dtype), scale_(scale), divide_(false), mask_(std::move(mask)),
        boxes_(std::move(boxes)), dict_repr_(std::move(dict_repr)) {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override;
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override {
    (void)image, (void)draws, (void)scratch;  // uint8 in, the same uint8 out: the value table does the rest
  }
  StageDtype dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  bool scale() const { return scale_; }
  /// ToTensor's img.float().div(255) rather than to_dtype's image.to(dtype).mul_(1 / 255).
  bool divide() const { return divide_; }
  const std::optional<std::string>& mask_dtype() const { return mask_; }
  const std::optional<std::string>& boxes_dtype() const { return boxes_; }

 private:
  std::string name_;
  StageDtype dtype_;
  bool scale_, divide_;
  std::optional<std::string> mask_, boxes_;
  std::string dict_repr_;  // empty: one dtype
};

/// Normalize(mean, std, inplace): (x - mean) / std per channel, in the image's float dtype.
class NormalizeTransform : public Transform {
 public:
  NormalizeTransform(std::vector<double> mean, std::vector<double> std, bool inplace)
      : mean_(std::move(mean)), std_(std::move(std)), inplace_(inplace) {}
  TargetSupport target_support() const override { return TargetSupport::kPixels; }  // targets pass through
  std::string repr() const override;
  /// torchvision's normalize_image on a uint8 image: TypeError (the pipeline refuses this before running).
  void apply(ImageU8& image, Draws& draws, TransformScratch& scratch) const override;
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& std() const { return std_; }

 private:
  std::vector<double> mean_, std_;
  bool inplace_;
};

} // namespace fastloop
