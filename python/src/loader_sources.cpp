// fastloop.Loader's arguments from the dict its package passes, and the data they name (loader_args.h).
#include "loader_args.h"

#include <utility>

namespace fastloop::python {

SplitLoaderArgs SplitLoaderArgs::from_dict(const py::dict& given) {
  SplitLoaderArgs a;
  for (const auto& [key, value] : given) {
    const std::string name = key.cast<std::string>();
    if (name == "arrow") {
      a.arrow = std::make_shared<const ArrowSource>(arrow_source_of(value));
      continue;
    }
    if (name == "sources") {
      for (const auto& source : value) {
        // copies and the last release may happen without the GIL (a rebuild in a forked child's thread)
        std::shared_ptr<py::object> kept(new py::object(py::reinterpret_borrow<py::object>(source)),
                                         [](py::object* o) {
                                           if (!Py_IsInitialized()) return;
                                           py::gil_scoped_acquire gil;
                                           delete o;
                                         });
        a.sources.push_back([kept](int64_t shuffle_buffer) {
          py::gil_scoped_acquire gil;
          return encoded_source_of(*kept, shuffle_buffer);
        });
      }
      continue;
    }
    if (name == "coco") {
      a.coco = coco_annotations_of(value);
      continue;
    }
    auto take = [&](const char* argument, auto& field) {
      if (name != argument) return false;
      field = value.cast<std::remove_reference_t<decltype(field)>>();
      return true;
    };
    if (take("split", a.split) || take("dtype", a.dtype) || take("device", a.device) || take("rank", a.rank) ||
        take("world_size", a.world_size) || take("weights", a.weights) || take("shuffle", a.shuffle) ||
        take("drop_last", a.drop_last) ||
        take("transform", a.transform) || take("files", a.files) || take("labels", a.labels) ||
        take("classes", a.classes) || take("views", a.views) || take("view_seeds", a.view_seeds) ||
        take("coco_root", a.coco_root) || take("coco_masks", a.coco_masks) ||
        take("coco_keypoints", a.coco_keypoints) || take("mask_files", a.mask_files) ||
        take("video_clip", a.video_clip) || take("video_policy", a.video_policy) ||
        take("video_seconds", a.video_seconds) || take("video_ranges", a.video_ranges) ||
        take("video_origins", a.video_origins) || take("video_shards", a.video_shards))
      continue;
    a.given.insert(config_set(a.config, name, config_value_of(value, name)));
  }
  return a;
}

DataOptions data_options_of(const DataConfig& data) {
  DataOptions options;
  options.image = data.image;
  options.skip_bad_images = data.bad_image_policy == "skip";
  return options;
}

DatasetSplits loader_data_of(const SplitLoaderArgs& args, const TrainConfig& config) {
  if (config.data.source == "files")
    return files_load(args.files, args.labels, args.classes, data_options_of(config.data));
  if (config.data.source == "coco") {  // one split of images with targets, as both splits (as fastloop.Files)
    DatasetSplits splits = encoded_load(std::make_shared<CocoImages>(args.coco_root, args.coco), {},
                                        data_options_of(config.data));
    splits.train.targets = std::make_shared<CocoTargets>(args.coco, args.coco_masks, args.coco_keypoints);
    splits.test.targets = splits.train.targets;
    return splits;
  }
  if (config.data.source == "segmentation") {  // image files and their class maps, as both splits
    auto masks = std::make_shared<const ClassMapFiles>(args.files, args.mask_files);
    auto images = LabeledFiles::make(args.files, std::vector<int64_t>(args.files.size(), 0), 1,
                                     [](size_t i) { return "images[" + std::to_string(i) + "]"; });
    DatasetSplits splits = encoded_load(images, {}, data_options_of(config.data));
    splits.train.targets = masks;
    splits.test.targets = masks;
    return splits;
  }
  if (config.data.source == "video") {  // video clips, as both splits (as fastloop.Files)
    const std::vector<int64_t>& c = args.video_clip;
    if (c.size() != 7) throw InputError("fastloop.Loader: video_clip must hold 7 numbers");
    VideoClipOptions clip;
    clip.frames_per_clip = c[0], clip.frames_between = c[1], clip.clips = c[2], clip.random = c[3] != 0;
    clip.subsample = c[4], clip.channels_first = c[5] != 0, clip.timestamps = c[6] != 0;
    clip.policy = args.video_policy, clip.seconds_set(args.video_seconds);
    if (!args.video_shards.empty()) {  // remote shards: fetched with the Loader's cache, timeout and shuffle buffer
      RemoteShardOptions remote;
      remote.shuffle_buffer = config.data.shuffle_buffer;
      remote.cache_dir = config.data.cache;
      remote.cache_bytes = config.data.cache_size << 20;
      remote.fetch.timeout_s = config.data.timeout;
      RemoteVideoSplit split = remote_video_clips_load(args.video_shards, clip, remote);
      return encoded_load(std::move(split.clips), std::move(split.classes), data_options_of(config.data),
                          split.num_classes);
    }
    std::vector<VideoRange> ranges;
    if (args.video_ranges.size() != 2 * args.video_origins.size() ||
        (!args.video_ranges.empty() && args.video_origins.size() != args.files.size()))
      throw InputError("fastloop.Loader: video_ranges must hold (start, end) per video");
    for (size_t v = 0; v < args.video_origins.size(); ++v)
      ranges.push_back(VideoRange{args.video_ranges[2 * v], args.video_ranges[2 * v + 1], args.video_origins[v]});
    const DataOptions options = data_options_of(config.data);
    return encoded_load(std::make_shared<const VideoClips>(args.files, args.labels, clip, std::move(ranges),
                                                           options.skip_bad_images),
                        args.classes, options);
  }
  if (config.data.source == "fields") {  // sample indices as labels: the consumer reads the fields by them
    std::vector<std::shared_ptr<const EncodedImages>> sources;
    for (const auto& make : args.sources) sources.push_back(make(config.data.shuffle_buffer));
    std::shared_ptr<const EncodedImages> source =
        args.weights.empty() ? sources.at(0) : std::make_shared<MixtureImages>(std::move(sources), args.weights);
    DatasetSplits splits = encoded_load(std::move(source), {}, data_options_of(config.data));
    for (Dataset* split : {&splits.train, &splits.test})  // the "classes" are the sample numbers: none to name
      std::vector<std::string>().swap(split->classes);
    return splits;
  }
  if (config.data.source == "arrow")
    return encoded_load(args.arrow->make(config.data.shuffle_buffer), args.arrow->classes,
                        data_options_of(config.data));
  return data_load(config.data);
}

}  // namespace fastloop::python
