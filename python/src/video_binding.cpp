// fastloop._C's video side for python/fastloop/_video.py: a file's frame index, chosen frames decoded as the
// loader's workers decode them (for VideoFolder.__getitem__ and the parity tests against torchcodec), and
// torchcodec's index samplers as fastloop computes them.
#include "bindings.h"

#include <ATen/ATen.h>

#include <cstring>

namespace fastloop::python {
namespace {

/// (uint8 [N, 3, H, W], [pts seconds]) of frames `frames` of the video at `path`.
py::tuple video_frames(const std::string& path, const std::vector<int64_t>& frames) {
  std::vector<ImageU8> images;
  VideoInfo info;
  {
    py::gil_scoped_release release;
    info = video_info(path);
    VideoFrameReader reader;
    reader.read(path, frames, images);
  }
  const int64_t H = images.empty() ? info.height : images.front().height;
  const int64_t W = images.empty() ? info.width : images.front().width;
  at::Tensor out = at::empty({static_cast<int64_t>(images.size()), H, W, 3}, at::kByte);
  py::list pts;
  for (size_t k = 0; k < images.size(); ++k) {
    if (images[k].height != H || images[k].width != W)
      throw InputError(path + ": its frames change size (frame " + std::to_string(frames[k]) + ")");
    std::memcpy(out[static_cast<int64_t>(k)].data_ptr(), images[k].data(), static_cast<size_t>(images[k].bytes()));
    pts.append(info.pts_seconds[static_cast<size_t>(frames[k])]);
  }
  return py::make_tuple(out.permute({0, 3, 1, 2}).contiguous(), pts);
}

VideoClipOptions clip_options(int64_t frames_per_clip, int64_t frames_between, int64_t clips, const std::string& sampler,
                              const std::string& policy, int64_t subsample, const std::vector<double>& seconds) {
  if (sampler != "random" && sampler != "regular" && sampler != "random_timestamps" && sampler != "regular_timestamps")
    throw InputError("videos: sampler must be 'random', 'regular', 'random_timestamps' or 'regular_timestamps', got '" +
                     sampler + "'");
  VideoClipOptions o;
  o.frames_per_clip = frames_per_clip, o.frames_between = frames_between, o.clips = clips;
  o.random = sampler == "random" || sampler == "random_timestamps";
  o.timestamps = sampler == "random_timestamps" || sampler == "regular_timestamps";
  o.policy = policy, o.subsample = subsample;
  o.seconds_set(seconds);
  return o;
}

}  // namespace

void video_bind(py::module_& module) {
  module.def(
      "_video_info", [](const std::string& path) {
        VideoInfo info;
        {
          py::gil_scoped_release release;
          info = video_info(path);
        }
        py::dict out;
        out["frames"] = info.frames, out["height"] = info.height, out["width"] = info.width;
        out["codec"] = info.codec, out["pts_seconds"] = info.pts_seconds;
        out["begin_seconds"] = info.begin_seconds, out["end_seconds"] = info.end_seconds;
        return out;
      },
      py::arg("path"), "the frame index of a video: frames, height, width, codec, pts_seconds, begin/end_seconds");
  module.def("_video_frames", &video_frames, py::arg("path"), py::arg("frames"),
             "(uint8 [N, 3, H, W], pts seconds) of the frames given, decoded as the loader's workers decode them");
  module.def(
      "_video_decode_count",
      [](const std::string& path, const std::vector<std::vector<int64_t>>& clips) {
        py::gil_scoped_release release;
        VideoFrameReader reader;
        std::vector<ImageU8> images;
        for (const std::vector<int64_t>& frames : clips) reader.read(path, frames, images);
        return std::make_pair(reader.seeks(), reader.frames_decoded());
      },
      py::arg("path"), py::arg("clips"),
      "(seeks, frames decoded) of one reader reading `clips` (lists of frames) in turn: what a clip costs");
  module.def(
      "_video_index_counts", [] {
        const VideoIndexCounts counts = video_index_counts();
        py::dict out;
        out["scanned"] = counts.scanned, out["cache_read"] = counts.cache_read;
        out["cache_written"] = counts.cache_written;
        return out;
      },
      "how the process's frame indices were come by: scanned from videos, read from $FASTLOOP_CACHE/video-index "
      "files, cache files written");
  module.def("_video_index_forget", &video_index_forget,
             "drops the process's frame indices (the cache files stay), as a new process starts (for tests)");
  module.def(
      "_transform_temporal_subsample", [](const std::string& spec) { return Pipeline(spec).temporal_subsample(); },
      py::arg("spec"), "a transform spec's top-level UniformTemporalSubsample(n)'s n (0: none), which picks clip frames");
  module.def(
      "_remote_video_list",
      [](const std::string& spec) {
        std::vector<std::string> names;
        RemoteShardSplits splits;
        {
          py::gil_scoped_release release;
          RemoteShardOptions options;
          options.videos = true;
          splits = remote_shards_load(spec, options);  // the shards.idx (and classes.txt) only
          names = remote_video_names(*splits.train);
        }
        return py::make_tuple(names, splits.num_classes, splits.classes);
      },
      py::arg("spec"),
      "(the videos' names 'URL/#K', the class count, the class names) of remote video shards, from their shards.idx");
  module.def("_video_libraries", &video_libraries, "the FFmpeg libraries video is decoded with (loads them)");
  module.def(
      "_video_clip_frames",
      [](const std::string& path, int64_t frames_per_clip, int64_t frames_between, int64_t clips,
         const std::string& sampler, const std::string& policy, int64_t subsample, const std::vector<double>& seconds,
         int64_t seed, int64_t epoch, int64_t video, const std::pair<double, double>& range, const std::string& where) {
        py::gil_scoped_release release;
        const VideoClipOptions o = clip_options(frames_per_clip, frames_between, clips, sampler, policy, subsample, seconds);
        VideoRange part;
        part.start = range.first, part.end = range.second, part.where = where;
        VideoFrameReader reader;
        return video_clips_frames(reader.timeline(path), o, part, static_cast<uint64_t>(seed), epoch, video, path);
      },
      py::arg("path"), py::arg("num_frames_per_clip"), py::arg("num_indices_between_frames"), py::arg("num_clips"),
      py::arg("sampler"), py::arg("policy"), py::arg("subsample"), py::arg("seconds"), py::arg("seed"),
      py::arg("epoch"), py::arg("video"), py::arg("range"), py::arg("where"),
      "every clip's frame indices of the video at `path`, as the loader draws them; `seconds`: the samplers' "
      "[seconds_between_frames, seconds_between_clip_starts, sampling_range_start, sampling_range_end], 0 / NaN "
      "where not given; `range`: (start, end) seconds of the part clips are drawn from (NaN: begin / end), named "
      "`where` in messages");
}

} // namespace fastloop::python
