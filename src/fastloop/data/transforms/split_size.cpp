// Batches sized by the transform (split_size.h).
#include "fastloop/data/transforms/split_size.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/image_decode.h"
#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/video_clips.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/video_batch.h"

namespace fastloop {
namespace {

constexpr int64_t kSkipTries = 16;  // unreadable videos in a row that bad_image_policy "skip" steps over

std::string size_text(ImageSize size) { return std::to_string(size.height) + " x " + std::to_string(size.width); }

}  // namespace

ImageSize transform_image_size(const std::string& transform, int64_t size, const SplitSizeNames& names,
                               ImageSize first) {
  const ImageSize given{size, size};
  if (transform.empty()) return size > 0 ? given : ImageSize{kImageSizeDefault, kImageSizeDefault};
  const Pipeline pipeline(transform);
  const ImageSize own = pipeline.output_size();
  if (own.known()) {
    if (size > 0 && own != given)
      throw InputError(names.transform + " ends in " + size_text(own) + " images, but " + names.size + " is " +
                       std::to_string(size) + ": leave " + names.size + " out (the batches take the transform's size) "
                       "or make the two agree");
    return own;
  }
  if (size > 0) return given;  // each image is checked against it as it is made
  // DataLoader's collate stacks images while their sizes agree: the first image's size, each image checked
  const ImageSize from_first = first.known() ? pipeline.output_size(first) : ImageSize{};
  if (from_first.known()) return from_first;
  throw InputError(names.transform + " " + pipeline.repr() + " makes images whose size follows each image's, "
                   "and a batch needs one size: end it with a crop or a resize to a size (CenterCrop(224), "
                   "Resize((224, 224)), RandomResizedCrop(224)), or give " + names.size + " to check every image against");
}

void split_size_resolve(Dataset& split, const std::string& transform, int64_t size, const SplitSizeNames& names) {
  if (!split.encoded) return;
  if (video_clips_of(split)) return video_split_size_resolve(split, transform, size, names);  // a video's frames
  ImageSize first;  // the first image's size, for a transform whose size follows each image's
  if (!transform.empty() && size <= 0 && split.encoded->size() > 0) {
    std::string scratch;
    try {
      const ImageInfo info = ImageDecoder().info(split.encoded->bytes(0, scratch), split.encoded->name(0));
      first = {info.height, info.width};
    } catch (const InputError&) {  // a damaged first image: the loader reports it by its policy, when read
    }
  }
  const ImageSize resolved = transform_image_size(transform, size, names, first);
  split.image_height = resolved.height;
  split.image_width = resolved.width;
}

void video_split_size_resolve(Dataset& split, const std::string& transform, int64_t size, const SplitSizeNames& names) {
  const VideoClips* clips = video_clips_of(split);
  ImageSize first;
  if (clips && clips->size() > 0 && size <= 0) {
    // The first video's frame size; under bad_image_policy "skip" the first that can be read, as a batch skips
    for (int64_t i = 0, tries = 0;; i = clips->clips_before(clips->video_of(i) + 1) % clips->size(), ++tries) {
      try {
        const VideoInfo info = video_info(clips->path(i));
        first = {info.height, info.width};
        break;
      } catch (const InputError&) {
        if (!split.skip_bad_images || tries + 1 >= kSkipTries) throw;
      }
    }
  }
  const ImageSize resolved = transform_image_size(transform, size, names, first);
  split.image_height = resolved.height;
  split.image_width = resolved.width;
}

void splits_size_resolve(DatasetSplits& splits, const DataConfig& config) {
  split_size_resolve(splits.train, config.transform, config.image.size, {"--transform", "--image-size"});
  split_size_resolve(splits.test, config.eval_transform, config.image.size, {"--eval-transform", "--image-size"});
}

} // namespace fastloop
