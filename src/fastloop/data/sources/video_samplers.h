// torchcodec's clip samplers (torchcodec/samplers/_index_based.py, _time_based.py) as functions of a video's frame
// times: where its clips start and which frames each takes. Index samplers: clips of frames_per_clip frames
// frames_between apart, starting inside the sampling range of frame indices (default [0, frames - span + 1), span =
// frames_between * (frames_per_clip - 1) + 1), drawn (clips_at_random_indices) or evenly spaced
// (clips_at_regular_indices); frames past the end filled by the policy ("repeat_last", "wrap", "error"). Time
// samplers: starts in seconds inside the sampling range, uniform (clips_at_random_timestamps) or
// seconds_between_clip_starts apart (clips_at_regular_timestamps: as many clips as fit), frames
// seconds_between_frames apart (default 1 / average fps), each the frame played at that time. Random starts are
// drawn per (seed, epoch, video), all clips of a video at once as torchcodec draws them, so batches do not depend on
// the number of loader threads. A VideoRange (a CSV row's start and end seconds) narrows a video to a part of it.
#pragma once

#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/video_range.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace fastloop {

struct VideoClipOptions {
  int64_t frames_per_clip = 16;  // num_frames_per_clip
  int64_t frames_between = 1;    // num_indices_between_frames
  int64_t clips = 1;             // num_clips: samples per video
  bool random = true;            // clips_at_random_indices; false: clips_at_regular_indices
  std::string policy = "repeat_last";  // "repeat_last", "wrap" or "error"
  int64_t subsample = 0;         // UniformTemporalSubsample(subsample) of the clip, taken before decoding; 0: none
  bool channels_first = false;   // batches [B, C, T, H, W] (torchvision's video models); false: [B, T, C, H, W]
  bool timestamps = false;       // starts in seconds: clips_at_random_timestamps (random), else _regular_timestamps
  double seconds_between_frames = 0;  // with timestamps; 0: 1 / the video's average fps (torchcodec's default)
  double seconds_between_clip_starts = 0;  // clips_at_regular_timestamps' step between clip starts (> 0)
  // sampling_range_start / _end: where clips may start, [start, end): seconds with timestamps, else frame indices
  // (whole numbers; negative ones count from the end, as torchcodec's); NaN: torchcodec's defaults (the video's
  // begin; its end less a clip's span)
  double range_start = std::numeric_limits<double>::quiet_NaN();
  double range_end = std::numeric_limits<double>::quiet_NaN();

  /// The samplers' numbers as fastloop.Loader passes them: [seconds_between_frames, seconds_between_clip_starts,
  /// sampling_range_start, sampling_range_end], 0 or NaN where not given (a shorter list gives the leading ones).
  void seconds_set(const std::vector<double>& seconds);

  /// Frames per sample after the subsample.
  int64_t frames() const { return subsample > 0 ? subsample : frames_per_clip; }
};

/// The frame indices of every clip of a video whose frame times `timeline` gives (number `video` of its list,
/// named `path`), as the loader draws them in `epoch` of a run with `seed`, then options.subsample's
/// UniformTemporalSubsample. InputError naming range.where and `path` for a sampling range torchcodec refuses
/// (its ValueError's words), a range without frames, a clip past the end under policy "error".
std::vector<std::vector<int64_t>> video_clips_frames(const VideoTimeline& timeline, const VideoClipOptions& options,
                                                     const VideoRange& range, uint64_t seed, int64_t epoch,
                                                     int64_t video, const std::string& path);

/// Clip `clip` of video_clips_frames' list, computing that one clip's frames (InputError when the video holds fewer
/// clips: it changed since its clips were counted).
std::vector<int64_t> video_clip_frames(const VideoTimeline& timeline, const VideoClipOptions& options,
                                       const VideoRange& range, uint64_t seed, int64_t epoch, int64_t video,
                                       int64_t clip, const std::string& path);

/// The clips (samples) of a video: options.clips, or under clips_at_regular_timestamps as many as its sampling
/// range holds (InputError naming `path` when it holds none).
int64_t video_clip_count(const VideoTimeline& timeline, const VideoClipOptions& options, const VideoRange& range,
                         const std::string& path);

} // namespace fastloop
