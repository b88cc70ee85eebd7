// A split of video clips: video files with class indices, each giving `clips` samples, a sample's frames
// chosen as torchcodec's index samplers choose them (clips_at_random_indices, clips_at_regular_indices): a
// clip of frames_per_clip frames frames_between apart, starting inside [0, frames - span] (span =
// frames_between * (frames_per_clip - 1) + 1), a video shorter than a clip starting at 0 and filled by the
// policy ("repeat_last", "wrap", "error"). Random starts are drawn per (seed, epoch, video), all clips of a
// video at once as torchcodec draws them, so batches do not depend on the number of loader threads. With
// `timestamps`, clips_at_random_timestamps: clip starts uniform in seconds, frames seconds_between_frames apart
// (default 1 / average fps), each the frame played at that time.
#pragma once

#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
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
  bool timestamps = false;       // clips_at_random_timestamps (random must be true)
  double seconds_between_frames = 0;  // with timestamps; 0: 1 / the video's average fps (torchcodec's default)

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

/// clips_at_random_timestamps' frames of clip `clip` of a video (torchcodec's definition, with its
/// average_fps = frames / (end - begin)): InputError naming `name` when no clip fits (torchcodec's ValueError).
std::vector<int64_t> video_clip_frames_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                             uint64_t seed, int64_t epoch, int64_t video, int64_t clip,
                                             const std::string& name);

class VideoClips : public EncodedImages {
 public:
  /// `paths` with class indices `labels` (each in [0, num_classes)); InputError for a path that is not a file.
  VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options);

  int64_t size() const override { return static_cast<int64_t>(paths_.size()) * options_.clips; }
  int64_t label(int64_t i) const override { return labels_[static_cast<size_t>(i / options_.clips)]; }
  std::string name(int64_t i) const override { return path(i); }
  /// Videos are read by the loader's VideoFrameReader, not as bytes: a logic error.
  std::string_view bytes(int64_t i, std::string& scratch) const override;

  const std::string& path(int64_t i) const { return paths_[static_cast<size_t>(i / options_.clips)]; }
  const VideoClipOptions& options() const { return options_; }
  /// The frame indices of sample `i` (clip i % clips of video i / clips) of its video, whose times `timeline` gives.
  std::vector<int64_t> sample_frames(int64_t i, const VideoTimeline& timeline, uint64_t seed, int64_t epoch) const;

 private:
  std::vector<std::string> paths_;
  std::vector<int64_t> labels_;
  VideoClipOptions options_;
};

} // namespace fastloop
