// torchcodec's index samplers over a list of videos (see video_clips.h).
#include "fastloop/data/sources/video_clips.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/video_member.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace fastloop {
namespace {

constexpr int64_t kClipStream = -1;  // the clip starts' draw stream, apart from every transform's
constexpr int64_t kMaxClipsPerVideo = 10'000'000;  // clips_at_regular_timestamps' bound (torch.arange's memory)

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

// Seconds as Python's repr writes them (torchcodec's messages): the fewest digits that read back the same.
std::string seconds_text(double seconds) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, seconds);
    if (std::strtod(text, nullptr) == seconds) break;
  }
  return text;
}

// torchcodec's 1 / average_fps, its average_fps = frames / (end - begin) (exact seek mode), or the option's.
double frame_step(const VideoTimeline& timeline, const VideoClipOptions& options) {
  if (options.seconds_between_frames > 0) return options.seconds_between_frames;
  return 1.0 / (static_cast<double>(timeline.frames) / (timeline.end_seconds - timeline.begin_seconds));
}

// torchcodec's _validate_sampling_range_time_based: [start, end) of the clip starts.
std::pair<double, double> timed_range(const VideoTimeline& timeline, const VideoClipOptions& options,
                                      const std::string& name) {
  const double begin = timeline.begin_seconds, end = timeline.end_seconds;
  if (timeline.frames < 1 || !(end > begin)) throw InputError(name + ": the video has no duration to sample clips in");
  const auto refuse = [&](const std::string& why) { throw InputError(name + ": " + why); };
  double start = begin;
  if (!std::isnan(options.range_start)) {
    start = options.range_start;
    if (start < begin) refuse("sampling_range_start (" + seconds_text(start) + ") must be at least " + seconds_text(begin));
    if (start >= end) refuse("sampling_range_start (" + seconds_text(start) + ") must be smaller than " + seconds_text(end));
  }
  double stop = end - static_cast<double>(options.frames_per_clip - 1) * frame_step(timeline, options);
  const bool given = !std::isnan(options.range_end);
  if (given) {
    stop = options.range_end;
    if (stop <= begin) refuse("sampling_range_end (" + seconds_text(stop) + ") must be at least " + seconds_text(begin));
  }
  if (start >= stop)
    refuse("sampling_range_start (" + seconds_text(start) + ") must be smaller than sampling_range_end (" +
           seconds_text(stop) + ")" + (given ? std::string() : ": the video's " + seconds_text(end - begin) +
           " s are shorter than a clip (torchcodec's time samplers refuse it too); use shorter clips or an index "
           "sampler"));
  return {start, std::min(stop, end)};
}

}  // namespace

std::vector<double> video_clip_starts_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                            uint64_t seed, int64_t epoch, int64_t video, const std::string& name) {
  const auto [start, stop] = timed_range(timeline, options, name);
  std::vector<double> starts;
  if (options.random) {
    Draws draws = pipeline_draws(seed, epoch, video, kClipStream);
    for (int64_t c = 0; c < options.clips; ++c) starts.push_back(draws.uniform(0.0, 1.0) * (stop - start) + start);
    return starts;
  }
  const double step = options.seconds_between_clip_starts;
  if (!(step > 0) || (stop - start) / step > kMaxClipsPerVideo)
    throw InputError(name + ": seconds_between_clip_starts (" + seconds_text(step) + ") must be > 0 and leave at most " +
                     std::to_string(kMaxClipsPerVideo) + " clips in the sampling range");
  const at::Tensor arange = at::arange(start, stop, step, at::TensorOptions(at::kDouble));  // as torchcodec makes them
  const double* at = arange.data_ptr<double>();
  for (int64_t k = 0; k < arange.numel(); ++k)
    if (at[k] < stop) starts.push_back(at[k]);  // torchcodec drops what float rounding put at or past the end
  return starts;
}

std::vector<int64_t> video_clip_frames_timed(const VideoTimeline& timeline, const VideoClipOptions& options,
                                             double start, const std::string& name) {
  const double step = frame_step(timeline, options), end = timeline.end_seconds;
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

int64_t video_clip_count(const VideoTimeline& timeline, const VideoClipOptions& options, const std::string& name) {
  if (!options.timestamps || options.random) return options.clips;
  return static_cast<int64_t>(video_clip_starts_timed(timeline, options, 0, 0, 0, name).size());
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

void VideoClipOptions::seconds_set(const std::vector<double>& seconds) {
  const auto at = [&](size_t k, double otherwise) { return k < seconds.size() ? seconds[k] : otherwise; };
  seconds_between_frames = at(0, 0.0), seconds_between_clip_starts = at(1, 0.0);
  range_start = at(2, std::numeric_limits<double>::quiet_NaN()), range_end = at(3, std::numeric_limits<double>::quiet_NaN());
}

VideoClips::VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options)
    : paths_(std::move(paths)), labels_(std::move(labels)), options_(std::move(options)) {
  if (paths_.size() != labels_.size())
    throw InputError("videos: " + std::to_string(paths_.size()) + " paths but " + std::to_string(labels_.size()) +
                     " labels; give one label per video");
  if (options_.frames_per_clip < 1 || options_.frames_between < 1 || options_.clips < 1 || options_.subsample < 0)
    throw InputError("videos: num_frames_per_clip, num_indices_between_frames and num_clips must be >= 1");
  if (options_.timestamps && (options_.seconds_between_frames < 0 || (!options_.random && options_.clips != 1) ||
                              (!options_.random && !(options_.seconds_between_clip_starts > 0))))
    throw InputError("videos: the time samplers take seconds_between_frames >= 0; clips_at_regular_timestamps takes "
                     "seconds_between_clip_starts > 0 and no num_clips (its clips are as many as fit)");
  if (options_.policy != "repeat_last" && options_.policy != "wrap" && options_.policy != "error")
    throw InputError("videos: policy must be 'repeat_last', 'wrap' or 'error', got '" + options_.policy + "'");
  for (const std::string& path : paths_) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error) && !video_member_split(path))
      throw InputError(path + ": no such video file (listed among the videos); check the path or the CSV row");
  }
  offsets_.push_back(0);
  VideoFrameReader reader;  // only the frame times, to count the clips of clips_at_regular_timestamps
  for (const std::string& path : paths_)
    offsets_.push_back(offsets_.back() + (options_.timestamps && !options_.random
                                              ? video_clip_count(reader.timeline(path), options_, path)
                                              : options_.clips));
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
  const int64_t video = video_of(i), clip = i - clips_before(video);
  if (options_.timestamps) {
    const std::vector<double> starts = video_clip_starts_timed(timeline, options_, seed, epoch, video, path(i));
    if (clip >= static_cast<int64_t>(starts.size()))
      throw InputError(path(i) + ": it has " + std::to_string(starts.size()) + " clips now, " +
                       std::to_string(clip + 1) + " or more when the videos were listed; the file changed since");
    return video_clip_frames_timed(timeline, options_, starts[static_cast<size_t>(clip)], path(i));
  }
  const std::vector<int64_t> starts = video_clip_starts(timeline.frames, options_, seed, epoch, video);
  return video_clip_frames(timeline.frames, starts[static_cast<size_t>(clip)], options_, path(i));
}

} // namespace fastloop
