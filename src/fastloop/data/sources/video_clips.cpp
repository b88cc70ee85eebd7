// torchcodec's index samplers over a list of videos (see video_clips.h).
#include "fastloop/data/sources/video_clips.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/pipeline.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace fastloop {
namespace {

constexpr int64_t kClipStream = -1;  // the clip starts' draw stream, apart from every transform's

// torch.linspace(start, end, steps) at i as ATen's CPU kernel computes it: in step_t (double for an integral
// dtype, float for float32), from the start for the first half and from the end for the second.
template <typename Step>
Step linspace_at(Step start, Step end, int64_t steps, int64_t i) {
  if (steps == 1) return start;
  const Step step = (end - start) / static_cast<Step>(steps - 1);
  const int64_t halfway = steps / 2;
  return i < halfway ? start + step * static_cast<Step>(i) : end - step * static_cast<Step>(steps - i - 1);
}

}  // namespace

std::vector<int64_t> video_clip_starts(int64_t frames, const VideoClipOptions& options, uint64_t seed, int64_t epoch,
                                       int64_t video) {
  if (frames < 1) throw InputError("a video without frames has no clips");
  const int64_t span = options.frames_between * (options.frames_per_clip - 1) + 1;
  const int64_t end = std::max<int64_t>(frames - span + 1, 1);  // exclusive; the start range is [0, end)
  std::vector<int64_t> starts;
  if (options.random) {
    Draws draws = pipeline_draws(seed, epoch, video, kClipStream);
    for (int64_t c = 0; c < options.clips; ++c) starts.push_back(draws.below(end));
    return starts;
  }
  for (int64_t c = 0; c < options.clips; ++c)
    starts.push_back(static_cast<int64_t>(linspace_at<double>(0.0, static_cast<double>(end - 1), options.clips, c)));
  return starts;
}

namespace {

// The policy's fill of a clip shorter than frames_per_clip (torchcodec's _POLICY_FUNCTIONS).
template <typename Value>
void clip_fill(std::vector<Value>& clip, const VideoClipOptions& options, const std::string& name, const std::string& why) {
  const auto wanted = static_cast<size_t>(options.frames_per_clip);
  if (clip.size() >= wanted) return;
  if (options.policy == "error" || clip.empty())
    throw InputError(name + ": a clip of " + std::to_string(options.frames_per_clip) + " frames " + why +
                     " (policy='" + options.policy + "'); use policy='repeat_last' or 'wrap', or shorter clips");
  const std::vector<Value> valid = clip;
  for (size_t k = clip.size(); k < wanted; ++k)
    clip.push_back(options.policy == "wrap" ? valid[k % valid.size()] : valid.back());
}

// UniformTemporalSubsample of a clip: torch.linspace(0, t - 1, n) in float32, then .long().
std::vector<int64_t> clip_subsample(const std::vector<int64_t>& clip, int64_t subsample) {
  if (subsample <= 0) return clip;
  std::vector<int64_t> kept;
  const auto t = static_cast<float>(clip.size());
  for (int64_t i = 0; i < subsample; ++i)
    kept.push_back(clip[static_cast<size_t>(linspace_at<float>(0.0f, t - 1.0f, subsample, i))]);
  return kept;
}

}  // namespace

std::vector<int64_t> video_clip_frames_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                             uint64_t seed, int64_t epoch, int64_t video, int64_t clip,
                                             const std::string& name) {
  const double begin = timeline.begin_seconds, end = timeline.end_seconds;
  if (timeline.frames < 1 || !(end > begin)) throw InputError(name + ": the video has no duration to sample clips in");
  const double step = options.seconds_between_frames > 0 ? options.seconds_between_frames
                                                         : (end - begin) / static_cast<double>(timeline.frames);
  const double range_end = std::min(end - static_cast<double>(options.frames_per_clip - 1) * step, end);
  if (begin >= range_end)
    throw InputError(name + ": sampling_range_start (" + std::to_string(begin) + ") must be smaller than "
                     "sampling_range_end (" + std::to_string(range_end) + "): the video's " + std::to_string(end - begin) +
                     " s are shorter than a clip (torchcodec's clips_at_random_timestamps refuses it too); use "
                     "shorter clips or an index sampler");
  Draws draws = pipeline_draws(seed, epoch, video, kClipStream);
  double start = begin;
  for (int64_t c = 0; c <= clip; ++c) start = draws.uniform(0.0, 1.0) * (range_end - begin) + begin;
  std::vector<double> times;
  for (int64_t k = 0; k < options.frames_per_clip; ++k)
    if (const double t = start + static_cast<double>(k) * step; t < end) times.push_back(t);
  clip_fill(times, options, name, "runs past the video's end");
  std::vector<int64_t> frames;
  const double* pts = timeline.pts_seconds;
  for (const double t : times)  // the frame played at t: the last one shown at or before it
    frames.push_back(std::max<int64_t>(0, std::upper_bound(pts, pts + timeline.frames, t) - pts - 1));
  return clip_subsample(frames, options.subsample);
}

std::vector<int64_t> video_clip_frames(int64_t frames, int64_t start, const VideoClipOptions& options,
                                       const std::string& name) {
  const int64_t span = options.frames_between * (options.frames_per_clip - 1) + 1;
  std::vector<int64_t> clip;
  for (int64_t f = start; f < std::min(start + span, frames); f += options.frames_between) clip.push_back(f);
  clip_fill(clip, options, name, std::to_string(options.frames_between) + " apart from frame " + std::to_string(start) +
                                     " runs past the video's " + std::to_string(frames) + " frames");
  return clip_subsample(clip, options.subsample);
}

VideoClips::VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options)
    : paths_(std::move(paths)), labels_(std::move(labels)), options_(std::move(options)) {
  if (paths_.size() != labels_.size())
    throw InputError("videos: " + std::to_string(paths_.size()) + " paths but " + std::to_string(labels_.size()) +
                     " labels; give one label per video");
  if (options_.frames_per_clip < 1 || options_.frames_between < 1 || options_.clips < 1 || options_.subsample < 0)
    throw InputError("videos: num_frames_per_clip, num_indices_between_frames and num_clips must be >= 1");
  if (options_.timestamps && (!options_.random || options_.seconds_between_frames < 0))
    throw InputError("videos: timestamp clips are drawn at random (clips_at_random_timestamps), "
                     "seconds_between_frames >= 0");
  if (options_.policy != "repeat_last" && options_.policy != "wrap" && options_.policy != "error")
    throw InputError("videos: policy must be 'repeat_last', 'wrap' or 'error', got '" + options_.policy + "'");
  for (const std::string& path : paths_) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error))
      throw InputError(path + ": no such video file (listed among the videos); check the path or the CSV row");
  }
}

std::string_view VideoClips::bytes(int64_t i, std::string& scratch) const {
  (void)scratch;
  throw std::logic_error(path(i) + ": a video is read by the loader's video decoder, not as encoded image bytes");
}

std::vector<int64_t> VideoClips::sample_frames(int64_t i, const VideoTimeline& timeline, uint64_t seed,
                                               int64_t epoch) const {
  const int64_t video = i / options_.clips, clip = i % options_.clips;
  if (options_.timestamps) return video_clip_frames_timed(timeline, options_, seed, epoch, video, clip, path(i));
  const std::vector<int64_t> starts = video_clip_starts(timeline.frames, options_, seed, epoch, video);
  return video_clip_frames(timeline.frames, starts[static_cast<size_t>(clip)], options_, path(i));
}

} // namespace fastloop
