// A list of videos as a split of clips (see video_clips.h).
#include "fastloop/data/sources/video_clips.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_member.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace fastloop {

VideoClips::VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options,
                       std::vector<VideoRange> ranges, bool skip_unreadable)
    : paths_(std::move(paths)), labels_(std::move(labels)), options_(std::move(options)), ranges_(std::move(ranges)) {
  if (paths_.size() != labels_.size())
    throw InputError("videos: " + std::to_string(paths_.size()) + " paths but " + std::to_string(labels_.size()) +
                     " labels; give one label per video");
  if (!ranges_.empty() && ranges_.size() != paths_.size())
    throw InputError("videos: " + std::to_string(paths_.size()) + " paths but " + std::to_string(ranges_.size()) +
                     " ranges; give one (start, end) per video");
  if (options_.frames_per_clip < 1 || options_.frames_between < 1 || options_.clips < 1 || options_.subsample < 0)
    throw InputError("videos: num_frames_per_clip, num_indices_between_frames and num_clips must be >= 1");
  if (options_.timestamps && (options_.seconds_between_frames < 0 || (!options_.random && options_.clips != 1) ||
                              (!options_.random && !(options_.seconds_between_clip_starts > 0))))
    throw InputError("videos: the time samplers take seconds_between_frames >= 0; clips_at_regular_timestamps takes "
                     "seconds_between_clip_starts > 0 and no num_clips (its clips are as many as fit)");
  if (!options_.timestamps && ((!std::isnan(options_.range_start) && options_.range_start != std::floor(options_.range_start)) ||
                               (!std::isnan(options_.range_end) && options_.range_end != std::floor(options_.range_end))))
    throw InputError("videos: the index samplers' sampling_range_start / _end are frame indices (whole numbers)");
  if (options_.policy != "repeat_last" && options_.policy != "wrap" && options_.policy != "error")
    throw InputError("videos: policy must be 'repeat_last', 'wrap' or 'error', got '" + options_.policy + "'");
  const bool ranged = std::any_of(ranges_.begin(), ranges_.end(), [](const VideoRange& r) { return !r.whole(); });
  if (ranged && (!std::isnan(options_.range_start) || !std::isnan(options_.range_end)))
    throw InputError("videos: sampling_range_start / _end apply to every video, a CSV list's start and end to each: "
                     "give one or the other");
  for (const VideoRange& range : ranges_) video_range_check(range);
  for (const std::string& path : paths_) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error) && !video_member_split(path))
      throw InputError(path + ": no such video file (listed among the videos); check the path or the CSV row");
  }
  offsets_.push_back(0);
  VideoFrameReader reader;  // only the frame times, to count the clips of clips_at_regular_timestamps
  for (size_t v = 0; v < paths_.size(); ++v) {
    int64_t count = options_.clips;
    if (options_.timestamps && !options_.random) {
      try {
        count = video_clip_count(reader.timeline(paths_[v]), options_, range_of(static_cast<int64_t>(v)), paths_[v]);
      } catch (const InputError&) {
        if (!skip_unreadable) throw;
        count = 1;  // read (and skipped) with the others; see the constructor's comment in video_clips.h
      }
    }
    offsets_.push_back(offsets_.back() + count);
  }
}

const VideoRange& VideoClips::range_of(int64_t video) const {
  static const VideoRange whole;
  return ranges_.empty() ? whole : ranges_[static_cast<size_t>(video)];
}

int64_t VideoClips::video_of(int64_t i) const {
  return std::upper_bound(offsets_.begin(), offsets_.end(), i) - offsets_.begin() - 1;
}

std::string_view VideoClips::bytes(int64_t i, std::string& scratch) const {
  (void)scratch;
  throw std::logic_error(path(i) + ": a video is read by the loader's video decoder, not as encoded image bytes");
}

std::vector<int64_t> VideoClips::sample_frames(int64_t i, const VideoTimeline& timeline, uint64_t seed,
                                               int64_t epoch) const {
  const int64_t video = video_of(i);
  return video_clip_frames(timeline, options_, range_of(video), seed, epoch, video, i - clips_before(video), path(i));
}

} // namespace fastloop
