// ModelInfo derived from a run's config and data (model_info.h); apart from model_info.cpp's JSON so that the
// parser's fuzz target links without the transform pipeline.
#include "fastloop/models/model_info.h"

#include "fastloop/data/transforms/split_size.h"
#include "fastloop/data/transforms/video_batch.h"

namespace fastloop {

ModelInfo model_info_for(const TrainConfig& config, const Dataset& split) {
  ModelInfo info;
  info.model = config.model.name;
  info.classes = split.classes;
  info.channels = split.channels();
  info.image_files = split.encoded != nullptr;
  const bool video = video_clips_of(split) != nullptr;
  // Image files: what evaluation feeds the model (predict and the exports feed the same), which may differ
  // from the train split's size (FixRes: train at 176, evaluate at 224). Video clips: the split's frame size,
  // which video_batch.h resolved from the first video.
  const bool files = info.image_files && !video;
  const ImageSize eval_size = files ? transform_image_size(config.data.eval_transform, config.data.image.size,
                                                           {"--eval-transform", "--image-size"})
                                    : ImageSize{split.height(), split.width()};
  info.height = eval_size.height;
  info.width = eval_size.width;
  info.resize = files ? eval_size.height * 256 / 224 : 0;  // as data/transforms/image_augment.cpp's eval transform
  info.mean = split.mean;
  info.std = split.stddev;
  info.channels_last = config.perf.channels_last && !video;  // clip batches are 5-D: contiguous
  info.autocast = config.perf.amp;
  info.transform = config.data.eval_transform;
  return info;
}

} // namespace fastloop
