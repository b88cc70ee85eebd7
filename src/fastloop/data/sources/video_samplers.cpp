// torchcodec's samplers over one video's frame times (see video_samplers.h); the messages of the ranges torchcodec
// refuses are its ValueError's words, so a user who knows one knows the other.
#include "fastloop/data/sources/video_samplers.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/pipeline.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>

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

// Seconds for a reader: 4 significant digits (a difference of times need not be the times' digits).
std::string seconds_short(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", seconds);
  return text;
}

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
std::vector<int64_t> clip_subsample(std::vector<int64_t> clip, int64_t subsample) {
  if (subsample <= 0) return clip;
  std::vector<int64_t> kept;
  const auto t = static_cast<float>(clip.size());
  for (int64_t i = 0; i < subsample; ++i)
    kept.push_back(clip[static_cast<size_t>(linspace_at<float>(0.0f, t - 1.0f, subsample, i))]);
  return kept;
}

// torchcodec's 1 / average_fps, its average_fps = frames / (end - begin) (exact seek mode), or the option's.
double frame_step(const VideoTimeline& timeline, const VideoClipOptions& options) {
  if (options.seconds_between_frames > 0) return options.seconds_between_frames;
  return 1.0 / (static_cast<double>(timeline.frames) / (timeline.end_seconds - timeline.begin_seconds));
}

// torchcodec's _validate_sampling_range_index_based: the [start, end) of the clip starts among `frames` frames.
std::pair<int64_t, int64_t> index_range(int64_t frames, const VideoClipOptions& options, const std::string& name) {
  if (frames < 1) throw InputError(name + ": a video without frames has no clips");
  const auto refuse = [&](const std::string& why) { throw InputError(name + ": " + why); };
  int64_t start = std::isnan(options.range_start) ? 0 : static_cast<int64_t>(options.range_start);
  if (start < 0) start += frames;  // -1: the last frame
  if (start < 0)
    refuse("sampling_range_start (" + std::to_string(start - frames) + ") counts back past the first of the " +
           std::to_string(frames) + " frames");
  if (start >= frames)
    refuse("sampling_range_start (" + std::to_string(start) + ") must be smaller than the number of frames (" +
           std::to_string(frames) + ").");
  const int64_t span = options.frames_between * (options.frames_per_clip - 1) + 1;
  int64_t end = 0;
  if (std::isnan(options.range_end)) {
    end = std::max<int64_t>(frames - span + 1, 1);
    if (start >= end)
      refuse("We determined that sampling_range_end should be " + std::to_string(end) + ", but it is smaller than or "
             "equal to sampling_range_start (" + std::to_string(start) + ").");
  } else {
    end = static_cast<int64_t>(options.range_end);
    if (end < 0) end += frames;
    end = std::min(end, frames);
    if (start >= end)
      refuse("sampling_range_start (" + std::to_string(start) + ") must be smaller than sampling_range_end (" +
             std::to_string(end) + ").");
  }
  return {start, end};
}

// torchcodec's _validate_sampling_range_time_based: [start, end) of the clip starts, in seconds.
std::pair<double, double> timed_range(const VideoTimeline& timeline, const VideoClipOptions& options,
                                      const std::string& name) {
  const double begin = timeline.begin_seconds, end = timeline.end_seconds;
  if (timeline.frames < 1 || !(end > begin)) throw InputError(name + ": the video has no duration to sample clips in");
  const auto refuse = [&](const std::string& why) { throw InputError(name + ": " + why); };
  double start = begin;
  if (!std::isnan(options.range_start)) {
    start = options.range_start;
    if (start < begin) refuse("sampling_range_start (" + seconds_repr(start) + ") must be at least " + seconds_repr(begin));
    if (start >= end) refuse("sampling_range_start (" + seconds_repr(start) + ") must be smaller than " + seconds_repr(end));
  }
  double stop = end - static_cast<double>(options.frames_per_clip - 1) * frame_step(timeline, options);
  const bool given = !std::isnan(options.range_end);
  if (given) {
    stop = options.range_end;
    if (stop <= begin) refuse("sampling_range_end (" + seconds_repr(stop) + ") must be at least " + seconds_repr(begin));
  }
  if (start >= stop)
    refuse("sampling_range_start (" + seconds_repr(start) + ") must be smaller than sampling_range_end (" +
           seconds_repr(stop) + ")" + (given ? std::string() : ": the video's " + seconds_repr(end - begin) +
           " s are shorter than a clip (torchcodec's time samplers refuse it too); use shorter clips or an index "
           "sampler"));
  return {start, std::min(stop, end)};
}

// A range as the time samplers take it: torchcodec's sampling_range_start = its start (or the video's begin),
// sampling_range_end = its end (or the video's) less the clip's span after its first frame.
VideoClipOptions timed_options(const VideoTimeline& timeline, VideoClipOptions options, const VideoRange& range,
                               const std::string& name) {
  if (range.whole()) return options;
  const double begin = timeline.begin_seconds, end = timeline.end_seconds;
  const double start = std::isnan(range.start) ? begin : std::max(range.start, begin);
  const double stop = std::isnan(range.end) ? end : std::min(range.end, end);
  if (start >= end)
    throw InputError(name + ": its range " + range.repr() + " starts at or after the video's end (" + seconds_repr(end) +
                     " s); check its start");
  if (stop <= begin)
    throw InputError(name + ": its range " + range.repr() + " ends at or before the video's begin (" +
                     seconds_repr(begin) + " s); check its end");
  const double step = frame_step(timeline, options);
  options.range_start = start;
  options.range_end = stop - static_cast<double>(options.frames_per_clip - 1) * step;
  if (!(options.range_end > start))
    throw InputError(name + ": its range " + range.repr() + " holds " + seconds_short(stop - start) + " s of the video, "
                     "less than a clip of " + std::to_string(options.frames_per_clip) + " frames " + seconds_short(step) +
                     " s apart; the time samplers draw clips that lie inside the range (as torchcodec's refuse a video "
                     "shorter than a clip): widen the range, or use shorter clips or an index sampler");
  return options;
}

// The frames [first, first + count) of a range under the index samplers: those whose pts lie in [start, end).
std::pair<int64_t, int64_t> range_frames(const VideoTimeline& timeline, const VideoRange& range, const std::string& name) {
  const double* pts = timeline.pts_seconds;
  const int64_t n = timeline.frames;
  if (range.whole() || n < 1) return {0, n};
  const int64_t first = std::isnan(range.start) ? 0 : std::lower_bound(pts, pts + n, range.start) - pts;
  const int64_t last = std::isnan(range.end) ? n : std::lower_bound(pts, pts + n, range.end) - pts;
  if (last <= first)
    throw InputError(name + ": no frame's time lies in its range " + range.repr() + " (the video's " + std::to_string(n) +
                     " frames are at " + seconds_repr(pts[0]) + " to " + seconds_repr(pts[n - 1]) +
                     " s); check its start and end");
  return {first, last - first};
}

// Where a video's clips start: frame indices (relative to the range's first frame) or seconds.
struct ClipStarts {
  VideoClipOptions options;  // with a range, the time samplers' sampling range made from it
  int64_t first = 0, count = 0;  // index samplers: the frames clips are drawn from
  std::vector<int64_t> frames;
  std::vector<double> seconds;
};

ClipStarts clip_starts(const VideoTimeline& timeline, const VideoClipOptions& options, const VideoRange& range,
                       uint64_t seed, int64_t epoch, int64_t video, const std::string& name) {
  ClipStarts s;
  Draws draws = pipeline_draws(seed, epoch, video, kClipStream);
  if (!options.timestamps) {
    s.options = options;
    std::tie(s.first, s.count) = range_frames(timeline, range, name);
    auto [start, end] = index_range(s.count, options, name);
    start += s.first, end += s.first;  // a range's first frame on: torchcodec's sampling range over the whole video
    for (int64_t c = 0; c < options.clips; ++c)  // torch.randint(start, end), torch.linspace(..., dtype=torch.int)
      s.frames.push_back(options.random ? start + draws.below(end - start)
                                        : static_cast<int64_t>(linspace_at<double>(static_cast<double>(start),
                                                                                   static_cast<double>(end - 1),
                                                                                   options.clips, c)));
    return s;
  }
  s.options = timed_options(timeline, options, range, name);
  const auto [start, stop] = timed_range(timeline, s.options, name);
  if (options.random) {
    for (int64_t c = 0; c < options.clips; ++c) s.seconds.push_back(draws.uniform(0.0, 1.0) * (stop - start) + start);
    return s;
  }
  const double step = options.seconds_between_clip_starts;
  if (!(step > 0) || (stop - start) / step > kMaxClipsPerVideo)
    throw InputError(name + ": seconds_between_clip_starts (" + seconds_repr(step) + ") must be > 0 and leave at most " +
                     std::to_string(kMaxClipsPerVideo) + " clips in the sampling range");
  const at::Tensor arange = at::arange(start, stop, step, at::TensorOptions(at::kDouble));  // as torchcodec makes them
  const double* at = arange.data_ptr<double>();
  for (int64_t k = 0; k < arange.numel(); ++k)
    if (at[k] < stop) s.seconds.push_back(at[k]);  // torchcodec drops what float rounding put at or past the end
  return s;
}

// The frames of the index samplers' clip starting at frame `start` (torchcodec's _build_all_clips_indices), those
// past the range's (the video's) last filled by the policy.
std::vector<int64_t> index_clip(const ClipStarts& s, int64_t start, const VideoRange& range, const std::string& name) {
  const VideoClipOptions& o = s.options;
  const int64_t span = o.frames_between * (o.frames_per_clip - 1) + 1, stop = s.first + s.count;
  std::vector<int64_t> clip;
  for (int64_t f = start; f < std::min(start + span, stop); f += o.frames_between) clip.push_back(f);
  const std::string from = std::to_string(o.frames_between) + " apart from frame " + std::to_string(start);
  clip_fill(clip, o, name, range.whole() ? from + " runs past the video's " + std::to_string(s.count) + " frames"
                                         : from + " runs past frame " + std::to_string(stop - 1) +
                                               ", the last in its range " + range.repr());
  return clip_subsample(std::move(clip), o.subsample);
}

// The time samplers' clip starting at `start` seconds: each frame the one played at start + k * step
// (torchcodec's get_frames_played_at), times past the video's end filled by the policy.
std::vector<int64_t> timed_clip(const VideoTimeline& timeline, const ClipStarts& s, double start, const std::string& name) {
  const double step = frame_step(timeline, s.options), end = timeline.end_seconds;
  std::vector<double> times;
  for (int64_t k = 0; k < s.options.frames_per_clip; ++k)
    if (const double t = start + static_cast<double>(k) * step; t < end) times.push_back(t);
  clip_fill(times, s.options, name, "runs past the video's end");
  std::vector<int64_t> frames;
  const double* pts = timeline.pts_seconds;
  for (const double t : times)  // the frame played at t: the last one shown at or before it
    frames.push_back(std::max<int64_t>(0, std::upper_bound(pts, pts + timeline.frames, t) - pts - 1));
  return clip_subsample(std::move(frames), s.options.subsample);
}

std::string name_of(const VideoRange& range, const std::string& path) {
  return range.where.empty() ? path : range.where + ": " + path;
}

}  // namespace

std::vector<std::vector<int64_t>> video_clips_frames(const VideoTimeline& timeline, const VideoClipOptions& options,
                                                     const VideoRange& range, uint64_t seed, int64_t epoch,
                                                     int64_t video, const std::string& path) {
  const std::string name = name_of(range, path);
  const ClipStarts s = clip_starts(timeline, options, range, seed, epoch, video, name);
  std::vector<std::vector<int64_t>> clips;
  for (const int64_t start : s.frames) clips.push_back(index_clip(s, start, range, name));
  for (const double start : s.seconds) clips.push_back(timed_clip(timeline, s, start, name));
  return clips;
}

std::vector<int64_t> video_clip_frames(const VideoTimeline& timeline, const VideoClipOptions& options,
                                       const VideoRange& range, uint64_t seed, int64_t epoch, int64_t video,
                                       int64_t clip, const std::string& path) {
  const std::string name = name_of(range, path);
  const ClipStarts s = clip_starts(timeline, options, range, seed, epoch, video, name);
  const auto count = static_cast<int64_t>(s.frames.size() + s.seconds.size());
  if (clip < 0 || clip >= count)
    throw InputError(name + ": it has " + std::to_string(count) + " clips now, " + std::to_string(clip + 1) +
                     " or more when the videos were listed; the file changed since");
  const auto at = static_cast<size_t>(clip);
  return options.timestamps ? timed_clip(timeline, s, s.seconds[at], name) : index_clip(s, s.frames[at], range, name);
}

int64_t video_clip_count(const VideoTimeline& timeline, const VideoClipOptions& options, const VideoRange& range,
                         const std::string& path) {
  if (!options.timestamps || options.random) return options.clips;
  return static_cast<int64_t>(clip_starts(timeline, options, range, 0, 0, 0, name_of(range, path)).seconds.size());
}

void VideoClipOptions::seconds_set(const std::vector<double>& seconds) {
  const auto at = [&](size_t k, double otherwise) { return k < seconds.size() ? seconds[k] : otherwise; };
  seconds_between_frames = at(0, 0.0), seconds_between_clip_starts = at(1, 0.0);
  range_start = at(2, std::numeric_limits<double>::quiet_NaN()), range_end = at(3, std::numeric_limits<double>::quiet_NaN());
}

} // namespace fastloop
