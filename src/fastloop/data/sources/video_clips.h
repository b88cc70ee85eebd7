// A split of video clips: video files with class indices, each giving options.clips samples (under
// clips_at_regular_timestamps as many as fit it), a sample's frames chosen by torchcodec's samplers
// (video_samplers.h), optionally inside a part of each video (a CSV row's start and end).
#pragma once

#include "fastloop/data/codecs/video_frames.h"
#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/sources/video_samplers.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

class VideoClips : public EncodedImages {
 public:
  /// `paths` with class indices `labels` (each in [0, num_classes)) and `ranges` (empty: whole videos; else one per
  /// video, video_range_check'ed). InputError for a path that is not a file. Under clips_at_regular_timestamps each
  /// video is indexed here, its clip count following from its duration: a video that cannot be indexed, or whose
  /// sampling range holds no clip, throws naming it, or with `skip_unreadable` (bad_image_policy "skip") keeps one
  /// sample, which fails again when read and is skipped as any unreadable clip (the next video's first clip stands
  /// in, counted in samples_skipped): so the epoch's length is fixed here, the same for any number of workers.
  VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options,
             std::vector<VideoRange> ranges = {}, bool skip_unreadable = false);

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
  const VideoRange& range_of(int64_t video) const;

  std::vector<std::string> paths_;
  std::vector<int64_t> labels_;
  VideoClipOptions options_;
  std::vector<VideoRange> ranges_;  // empty: whole videos
  std::vector<int64_t> offsets_;  // per video its first sample, then the number of samples
};

} // namespace fastloop
