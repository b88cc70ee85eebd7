// Batch assembly from encoded images through the loader's transform pipeline (AugmentOptions::pipeline;
// without one, the built-in flags' default: train = RandomResizedCrop(size) + RandomHorizontalFlip, eval =
// Resize(size * 256 / 224) + CenterCrop(size), then ToTensor + Normalize). A pipeline that begins with a crop
// or resize has each sample decoded only where its crop reads (eval: the part under the centre crop), at full
// scale (AugmentOptions::fast_decode: at the smallest JPEG DCT scale that still covers its crop at the output
// size), resized with image_resize.h (ATen's uint8 antialiased
// bilinear kernel, bit for bit); the uint8 transforms follow, and the output stage's value table writes the
// result into the batch buffer.
#pragma once

#include "fastloop/data/transforms/augment_options.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/codecs/image_decode.h"
#include "fastloop/data/transforms/builtin_transforms.h"
#include "fastloop/data/transforms/views.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace fastloop {

/// TransformTypeError unless the pipeline ends with float images (the batches are float).
class Pipeline;
void pipeline_check_output(const Pipeline& pipeline);

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

/// The decode alone of sample `index` (its encoded `bytes`), as encoded_batch_assemble()'s worker decodes it for
/// `options`: the same region at the same scale for a pipeline that begins with a crop or resize, else the whole
/// image; no transform after. Returns the pixels decoded. `fastloop bench loader --decode-limit` times it.
int64_t encoded_decode_only(const Dataset& dataset, std::string_view bytes, int64_t index, const AugmentOptions& options,
                            uint64_t seed, int64_t epoch);

/// encoded_batch_assemble() of several views (views.h): each sample read and decoded once, at full scale (with
/// options.fast_decode: the finest JPEG DCT scale any view's leading crop or resize needs, full scale when a
/// view begins otherwise), then
/// view v's pipeline with view_seed(seed, v)'s draws into views[v].images ([count, 3, H_v, W_v]). A single
/// view decodes as encoded_batch_assemble() does: only the region its crop reads. A dataset of several images per
/// sample (EncodedImages::parts() > 1) needs one view per part: view v decodes part v as a single view would.
AssembleCounts encoded_views_assemble(const Dataset& dataset, const int64_t* indices, int64_t count,
                                      const AugmentOptions& options, const std::vector<ViewTarget>& views,
                                      uint64_t seed, int64_t epoch, at::Tensor& labels);

} // namespace fastloop
