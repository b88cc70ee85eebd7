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

std::vector<int64_t> video_clip_frames(int64_t frames, int64_t start, const VideoClipOptions& options,
                                       const std::string& name) {
  const int64_t span = options.frames_between * (options.frames_per_clip - 1) + 1;
  std::vector<int64_t> clip;
  for (int64_t f = start; f < std::min(start + span, frames); f += options.frames_between) clip.push_back(f);
  const auto wanted = static_cast<size_t>(options.frames_per_clip);
  if (clip.size() < wanted) {
    if (options.policy == "error")
      throw InputError(name + ": a clip of " + std::to_string(options.frames_per_clip) + " frames " +
                       std::to_string(options.frames_between) + " apart from frame " + std::to_string(start) +
                       " runs past the video's " + std::to_string(frames) + " frames (policy='error'); use "
                       "policy='repeat_last' or 'wrap', or shorter clips");
    const std::vector<int64_t> valid = clip;
    for (size_t k = clip.size(); k < wanted; ++k)
      clip.push_back(options.policy == "wrap" ? valid[k % valid.size()] : valid.back());
  }
  if (options.subsample <= 0) return clip;
  // UniformTemporalSubsample: torch.linspace(0, t - 1, n) in float32, then .long()
  std::vector<int64_t> kept;
  const auto t = static_cast<float>(clip.size());
  for (int64_t i = 0; i < options.subsample; ++i)
    kept.push_back(clip[static_cast<size_t>(linspace_at<float>(0.0f, t - 1.0f, options.subsample, i))]);
  return kept;
}

VideoClips::VideoClips(std::vector<std::string> paths, std::vector<int64_t> labels, VideoClipOptions options)
    : paths_(std::move(paths)), labels_(std::move(labels)), options_(std::move(options)) {
  if (paths_.size() != labels_.size())
    throw InputError("videos: " + std::to_string(paths_.size()) + " paths but " + std::to_string(labels_.size()) +
                     " labels; give one label per video");
  if (options_.frames_per_clip < 1 || options_.frames_between < 1 || options_.clips < 1 || options_.subsample < 0)
    throw InputError("videos: num_frames_per_clip, num_indices_between_frames and num_clips must be >= 1");
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

std::vector<int64_t> VideoClips::sample_frames(int64_t i, int64_t frames, uint64_t seed, int64_t epoch) const {
  const int64_t video = i / options_.clips, clip = i % options_.clips;
  const std::vector<int64_t> starts = video_clip_starts(frames, options_, seed, epoch, video);
  return video_clip_frames(frames, starts[static_cast<size_t>(clip)], options_, path(i));
}

} // namespace fastloop
