// Batch assembly for detection and segmentation (Dataset::targets): each sample's image decoded whole, its
// targets made at the decoded size (data/sources/target_source.h), the pipeline run on both with one draw per
// transform (Pipeline::run_targets), then the image through the output stage. Sizes may differ from sample
// to sample, so each sample is its own set of tensors; the loader stacks the images when they agree.
#pragma once

#include "fastloop/data/loader/batch_buffers.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace fastloop {

/// One sample of a detection or segmentation batch.
struct TargetSample {
  int64_t index = -1;  // the sample's index in the data set (its image id and other keys are looked up by it)
  at::Tensor image;    // [3, H, W], the pipeline's output dtype (uint8 without a conversion)
  at::Tensor boxes;    // float32 [K, 4] in `format`; undefined when the source gives no boxes
  BoxFormat format = BoxFormat::kXYXY;
  at::Tensor labels;   // int64 [K]
  at::Tensor kept;     // int64 [K]: each box's index among the sample's boxes before SanitizeBoundingBoxes
  at::Tensor masks;    // uint8 [K, H, W] instance masks, or [H, W] a class map; undefined when none
  at::Tensor keypoints;  // float32 [..., 2] (COCO: [N, K, 2]) in pixels; undefined when the source gives none
};

/// A batch's images and class maps in one tensor each, when every sample's agree in size: `images`
/// [B, C, H, W] when the pipeline fixes the output size (Pipeline::output_size), `masks` [B, H, W] when every
/// sample has a class map of the images' size; each sample's image and masks are then views of them. The
/// samples are written straight into them: no copy per sample, and no ATen op (stack) that would wake an
/// OpenMP team from a worker thread. Undefined where the samples do not agree.
struct TargetStack {
  at::Tensor images;
  at::Tensor masks;
};

/// Samples indices[0, count) of `dataset` (encoded, with targets) through `pipeline` with (seed, epoch,
/// index)'s draws, into `out` (resized to count) and, where they agree in size, `stack` (its tensors from
/// `buffers`). An undecodable image or a bad target throws InputError naming it.
void target_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const Pipeline& pipeline,
                           uint64_t seed, int64_t epoch, std::vector<TargetSample>& out, TargetStack& stack,
                           BatchBuffers& buffers);

} // namespace fastloop
