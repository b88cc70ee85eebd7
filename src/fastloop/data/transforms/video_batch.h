// Batch assembly of video clips (a Dataset whose `encoded` is a VideoClips): each sample's frames decoded by the thread's
// VideoFrameReader (only the frames its clip asks for), then every frame through the loader's pipeline with
// the draws of the sample, so one draw serves the whole clip as torchvision draws once per video, and
// written through the output stage into the batch, [B, T, C, H, W] or [B, C, T, H, W].
#pragma once

#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/augment_options.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace fastloop {

class Pipeline;
class VideoClips;

/// The dataset's clips when it is a video split (its `encoded` a VideoClips), else nullptr.
const VideoClips* video_clips_of(const Dataset& dataset);

/// A pipeline's UniformTemporalSubsample(n) (Pipeline::temporal_subsample) against the dataset: TransformTypeError
/// for one on images, or on clips listed with another (their frames are picked when they are listed).
void video_subsample_check(const Dataset& dataset, const Pipeline& pipeline);

/// Samples indices[0, count) of a video split into `images` (allocated here: `dtype`, [count, T, 3, H, W],
/// or [count, 3, T, H, W] with the clips' channels_first, H x W the split's size) and `labels` (int64 [count]).
/// A clip whose video cannot be read (opened, indexed, its frames decoded) throws InputError naming the file (and
/// the frame), or with the split's skip_bad_images (bad_image_policy "skip") the next video's first clip stands in
/// for it; returns the number of clips skipped so. A transform that makes another size than the split's names the
/// size to end it with.
int64_t video_batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                             uint64_t seed, int64_t epoch, at::ScalarType dtype, at::Tensor& images,
                             at::Tensor& labels);

} // namespace fastloop
