// The size of a split's batches of image files: the one its transform ends in (a crop or a resize to a
// size), so a torchvision pipeline needs no image_size beside it, as with DataLoader; --image-size where the
// transform leaves the size to each image (then every image is checked against it); 224 for the built-in ones.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/transform.h"

#include <string>

namespace fastloop {

/// How the caller names the transform and the size in messages: the CLI's flags or the Python arguments.
struct SplitSizeNames {
  std::string transform = "--transform";
  std::string size = "--image-size";
};

/// The size batches of `transform` (a spec; empty: the built-in transforms) hold, given `size` (> 0: the
/// image size the user gave; 0: none). A transform that ends in a fixed size gives it, and a `size` that
/// disagrees is an InputError naming both; one whose size follows each image needs `size` (InputError saying
/// what to end it with otherwise) or, given the split's `first` image size, the size the transform makes of it
/// (each image is then checked against it, as DataLoader's collate stacks images while their sizes agree); the
/// built-in transforms make squares of `size`, or kImageSizeDefault.
ImageSize transform_image_size(const std::string& transform, int64_t size, const SplitSizeNames& names = {},
                               ImageSize first = {});

/// An encoded split's size set from transform_image_size() (video clips: video_batch.h's rule); splits held in
/// memory keep their images' own.
void split_size_resolve(Dataset& split, const std::string& transform, int64_t size, const SplitSizeNames& names = {});

/// A video split's frame size after `transform` (split_size.h's rule, the first video's frame size standing in
/// for the first image's; with skip_bad_images, the first video that can be read): set as the split's
/// image_height x image_width.
void video_split_size_resolve(Dataset& split, const std::string& transform, int64_t size, const SplitSizeNames& names);

/// Both splits of a run: train's from config.transform, test's from config.eval_transform.
void splits_size_resolve(DatasetSplits& splits, const DataConfig& config);

} // namespace fastloop
