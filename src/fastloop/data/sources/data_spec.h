// What every data spec shares (source.h turns specs into splits): the forms a spec takes, the options a run's
// settings add to one, and the error of a spec that does not parse. Apart from source.h so that the loaders
// source.cpp dispatches to (video_sources.h) can use them without including it back.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>
#include <string>

namespace fastloop {

// The forms data_load accepts, as listed in its error messages and in the CLI's help.
constexpr const char* kDataSpecForms =
    "fashion-mnist[:DIR], mnist:DIR, cifar10:DIR, synthetic[:CxHxW[:N]], imagefolder:DIR, "
    "shards:DIR|URL|TRAIN_PATTERN[::VAL_PATTERN] (local, s3://, http(s)://), csv:TRAIN.csv[::VAL.csv], "
    "videofolder:DIR, videocsv:TRAIN.csv[::VAL.csv]";

/// What a run's settings add to a spec: the output size of encoded images, the normalisation and what an
/// undecodable image does (--image-size, --mean, --std, --bad-image-policy).
struct DataOptions {
  ImageSettings image;         // the crop side of encoded images; the normalisation (empty: the dataset's own)
  bool skip_bad_images = false;
  int64_t shuffle_buffer = 2048;  // samples: the shuffle buffer tar shards are read through (--shuffle-buffer)
  std::string cache_dir;          // remote shards: --data-cache (empty: none)
  int64_t cache_mib = 10240;      // --data-cache-size
  double timeout_s = 60.0;        // remote shards: --data-timeout
  ClipSettings clip;              // videos: the clips each video gives (--clip-frames, --clip-step, ...)
  // videos: --transform and --eval-transform, whose top-level UniformTemporalSubsample(n) picks each split's frames
  std::string transform, eval_transform;
};

/// ImageNet's per-channel statistics (torchvision's reference recipes), the default for encoded images.
constexpr float kImageNetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kImageNetStd[3] = {0.229f, 0.224f, 0.225f};

/// Throws the InputError of a spec that does not parse: the spec, `why` and the allowed forms.
[[noreturn]] void data_spec_fail(const std::string& spec, const std::string& why);

} // namespace fastloop
