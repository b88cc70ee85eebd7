// What a run of video clips (--data videofolder:, videocsv:) changes in the setup of an image run: the model
// takes 5-D clip batches, so its probe is a clip, batches and parameters stay contiguous (channels_last is a
// 4-D layout), and what works on images only (the built-in models, --mixup, --cutmix, --resize-min,
// --tta flip-translate) is refused naming its flag.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// Whether `split` holds video clips.
bool split_is_video(const Dataset& split);

/// Throws InputError naming the flag of a setting a run of video clips cannot take.
void video_run_check(const TrainConfig& config);

/// One clip's shape as the model takes it: {C, T, H, W} (--clip-layout CTHW) or {T, C, H, W}.
std::vector<int64_t> video_clip_shape(const Dataset& split);

/// What a video model's forward must take, for model_check_forward's message: "one clip batch [N, C, T, H, W]
/// (--clip-layout CTHW, --clip-frames 16)".
std::string video_model_input(const Dataset& split);

} // namespace fastloop
