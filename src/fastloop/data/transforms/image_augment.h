// Batch assembly from encoded images through the loader's transform pipeline (AugmentOptions::pipeline;
// without one, the built-in flags' default: train = RandomResizedCrop(size) + RandomHorizontalFlip, eval =
// Resize(size * 256 / 224) + CenterCrop(size), then ToTensor + Normalize). A pipeline that begins with a crop
// or resize has each sample decoded at the smallest JPEG DCT scale that still covers its crop at the output
// size (eval: only the part under the centre crop), resized with image_resize.h (ATen's uint8 antialiased
// bilinear kernel, bit for bit); the uint8 transforms follow, and the output stage's value table writes the
// result into the batch buffer.
#pragma once

#include "fastloop/data/transforms/augment_options.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/codecs/image_decode.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace fastloop {

/// A crop in pixels of the full-scale image (torchvision's top, left, height, width).
using CropBox = PixelRect;

/// torchvision.transforms.v2.RandomResizedCrop's parameters for an image of height x width, with the
/// uniform draws taken from (seed, epoch, index) instead of torch's generator.
CropBox random_resized_crop_box(int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index);

/// Whether sample `index` of `epoch` is flipped (probability 1/2), from the same (seed, epoch, index): what
/// RandomHorizontalFlip() draws second in a pipeline (pipeline_draws position 1).
bool random_flip(uint64_t seed, int64_t epoch, int64_t index);

/// The transform spec the built-in flags stand for on an encoded dataset (see above; options.erase adds
/// RandomErasing(p=erase) after Normalize, the dataset's mean and std are Normalize's).
std::string transform_spec_default(const Dataset& dataset, const AugmentOptions& options);

/// TransformTypeError unless the pipeline ends with float images (the batches are float).
class Pipeline;
void pipeline_check_output(const Pipeline& pipeline);

/// Resize(size * 256 / 224) then CenterCrop(size): the resized image's size and the crop within it.
struct EvalGeometry {
  int64_t resized_height = 0, resized_width = 0;
  CropBox crop;  // in the resized image
};
EvalGeometry eval_geometry(int64_t height, int64_t width, int64_t size);

/// `box` of `image` resized to out_height x out_width (antialiased bilinear, align_corners=False) into
/// `out`, a uint8 [1, 3, out_height, out_width] tensor (reused when it has that shape). As
/// torchvision.transforms.v2.functional.resized_crop(image, *box, size, antialias=True).
void resized_crop(const RgbImage& image, const CropBox& box, int64_t out_height, int64_t out_width, at::Tensor& out);

/// batch_assemble() for an encoded dataset: options.crop selects the train transform, otherwise eval's;
/// options.flip the random flip. Returns how many samples were undecodable and replaced (only with
/// dataset.skip_bad_images; otherwise the first bad one throws InputError naming its file).
int64_t encoded_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                               const AugmentOptions& options, uint64_t seed, int64_t epoch, at::Tensor& images,
                               at::Tensor& labels);

} // namespace fastloop
