// A run of video clips (video_run.h).
#include "fastloop/train/video_run.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/video_clips.h"
#include "fastloop/data/transforms/video_batch.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/tta.h"

namespace fastloop {

bool split_is_video(const Dataset& split) { return video_clips_of(split) != nullptr; }

void video_run_check(const TrainConfig& config) {
  auto refuse = [&](bool given, const std::string& flag, const std::string& why) {
    if (given) throw InputError(flag + " is not supported with video clips (--data " + config.data.source + "): " + why);
  };
  refuse(model_is_builtin(config.model.name), "--model " + config.model.name,
         "the built-in models take images [N, C, H, W]; give a video model that takes clips [N, C, T, H, W] as "
         "--model torchscript:FILE.pt (torch.jit.script of e.g. torchvision's r3d_18, then torch.jit.save), or a "
         "registered one");
  refuse(config.data.mixup > 0, "--mixup", "it mixes images; drop it");
  refuse(config.data.cutmix > 0, "--cutmix", "its boxes are cut from images; drop it");
  refuse(config.data.resize_min > 0, "--resize-min", "progressive resizing resizes image batches; drop it");
  refuse(tta_mode(config.data) == "flip-translate", "--tta flip-translate",
         "its shifts pad images; use --tta flip or off");
}

std::vector<int64_t> video_clip_shape(const Dataset& split) {
  const VideoClipOptions& clip = video_clips_of(split)->options();
  const int64_t T = clip.frames(), C = split.channels(), H = split.height(), W = split.width();
  return clip.channels_first ? std::vector<int64_t>{C, T, H, W} : std::vector<int64_t>{T, C, H, W};
}

std::string video_model_input(const Dataset& split) {
  const VideoClipOptions& clip = video_clips_of(split)->options();
  return std::string("one clip batch ") + (clip.channels_first ? "[N, C, T, H, W] (--clip-layout CTHW" :
                                                                "[N, T, C, H, W] (--clip-layout TCHW") +
         ", --clip-frames " + std::to_string(clip.frames_per_clip) + ")";
}

} // namespace fastloop
