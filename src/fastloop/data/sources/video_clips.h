// A split of video clips: video files with class indices, each giving `clips` samples, a sample's frames
// chosen as torchcodec's index samplers choose them (clips_at_random_indices, clips_at_regular_indices): a
// clip of frames_per_clip frames frames_between apart, starting inside [0, frames - span] (span =
// frames_between * (frames_per_clip - 1) + 1), a video shorter than a clip starting at 0 and filled by the
// policy ("repeat_last", "wrap", "error"). Random starts are drawn per (seed, epoch, video), all clips of a
// video at once as torchcodec draws them, so batches do not depend on the number of loader threads. With
// `timestamps`, torchcodec's time samplers: clip starts in seconds inside the sampling range, uniform
// (clips_at_random_timestamps) or seconds_between_clip_starts apart (clips_at_regular_timestamps: as many clips
// as fit, so a video's count follows from its duration), frames seconds_between_frames apart (default 1 /
// average fps), each the frame played at that time.
#pragma once

#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/encoded_images.h"

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
  // With timestamps, sampling_range_start / _end: where clips may start, [start, end) seconds; NaN: torchcodec's
  // defaults (the video's begin; its end less a clip's span)
  double range_start = std::numeric_limits<double>::quiet_NaN();
  double range_end = std::numeric_limits<double>::quiet_NaN();

  /// The time samplers' seconds as fastloop.Loader passes them: [seconds_between_frames,
  /// seconds_between_clip_starts, sampling_range_start, sampling_range_end], 0 or NaN where not given (a shorter
  /// list gives the leading ones).
  void seconds_set(const std::vector<double>& seconds);

  /// Frames per sample after the subsample.
  int64_t frames() const { return subsample > 0 ? subsample : frames_per_clip; }
};

/// The start frame of each of options.clips clips of a video of `frames` frames: torchcodec's
/// torch.randint(start, end, (num_clips,)) with `draws` (uniform below end - start) when random, else its
/// torch.linspace(start, end - 1, num_clips, dtype=torch.int). InputError when `frames` < 1.
std::vector<int64_t> video_clip_starts(int64_t frames, const VideoClipOptions& options, uint64_t seed, int64_t epoch,
                                       int64_t video);

/// The frame indices of the clip starting at `start` (torchcodec's _build_all_clips_indices with the
/// policy), then options.subsample's UniformTemporalSubsample. InputError naming `name` under policy "error".
std::vector<int64_t> video_clip_frames(int64_t frames, int64_t start, const VideoClipOptions& options,
                                       const std::string& name);

/// The clip starts in seconds of a video under the time samplers (options.timestamps): clips_at_random_timestamps'
/// options.clips starts, drawn per (seed, epoch, video), or clips_at_regular_timestamps' torch.arange(range start,
/// range end, seconds_between_clip_starts) in float64 (ATen's, as torchcodec calls it). InputError naming `name`
/// for a sampling range torchcodec refuses (its ValueError's words), e.g. a video shorter than a clip.
std::vector<double> video_clip_starts_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                            uint64_t seed, int64_t epoch, int64_t video, const std::string& name);

/// The frames of the time sampler's clip starting at `start` seconds: each the frame played at start + k *
/// seconds_between_frames (torchcodec's get_frames_played_at, with its average_fps = frames / (end - begin)),
/// times past the video's end filled by the policy, then options.subsample's UniformTemporalSubsample.
std::vector<int64_t> video_clip_frames_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                             double start, const std::string& name);

/// The clips (samples) of a video: options.clips, or under clips_at_regular_timestamps as many as its sampling
/// range holds (InputError naming `name` when it holds none).
int64_t video_clip_count(const VideoTimeline& timeline, const VideoClipOptions& options, const std::string& name);

class VideoClips : public EncodedImages {
 public:
  /// `paths` with class indices `labels` (each in [0, num_classes)); InputError for a path that is not a file.
  /// Under clips_at_regular_timestamps each video is indexed here, its clip count following from its duration.
  VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options);

  int64_t size() const override { return offsets_.back(); }
  int64_t label(int64_t i) const override { return labels_[static_cast<size_t>(video_of(i))]; }
  std::string name(int64_t i) const override { return path(i); }
  /// Videos are read by the loader's VideoFrameReader, not as bytes: a logic error.
  std::string_view bytes(int64_t i, std::string& scratch) const override;

  const std::string& path(int64_t i) const { return paths_[static_cast<size_t>(video_of(i))]; }
  const VideoClipOptions& options() const { return options_; }
  /// The video of sample `i`; its clip is i - the video's first sample (clips_before).
  int64_t video_of(int64_t i) const;
  int64_t clips_before(int64_t video) const { return offsets_[static_cast<size_t>(video)]; }
  /// The frame indices of sample `i` (a clip of video video_of(i)), whose times `timeline` gives.
  std::vector<int64_t> sample_frames(int64_t i, const VideoTimeline& timeline, uint64_t seed, int64_t epoch) const;

 private:
  std::vector<std::string> paths_;
  std::vector<int64_t> labels_;
  VideoClipOptions options_;
  std::vector<int64_t> offsets_;  // per video its first sample, then the number of samples
};

} // namespace fastloop
