// fastloop.Loader's arguments as the binding receives them (SplitLoaderArgs) and the data they name: the
// splits of fastloop.Files, COCO, class maps, video clips, fields and mixtures, Arrow sources or a --data
// spec (loader_sources.cpp). The Loader itself, its epochs and batches, are loader_binding.cpp's.
#pragma once

#include "bindings.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fastloop::python {

/// What fastloop.Loader passes (python/fastloop/_loader_params.py, where its parameters are declared): its
/// settings of `fastloop train` by TOML key ("data.batch_size"), set through the config field table as a
/// recipe's are, and the few arguments only a Loader has. A None was left out: the default, or the split's.
struct SplitLoaderArgs {
  TrainConfig config;
  std::set<std::string> given;  // the flags of the settings given ("--workers"), as a command line's
  std::string split = "train", dtype = "float32", device = "cpu";
  int64_t rank = 0, world_size = 1;
  std::optional<bool> shuffle, drop_last;
  std::string transform;  // the pipeline spec (fastloop.transforms.compile_transform); empty: the built-in
  std::optional<std::vector<std::string>> views;  // several views: each one's spec ("": the built-in)
  std::vector<int64_t> view_seeds;  // per view, the view whose draws it shares (the crops of a FiveCrop); empty: own
  // fastloop.Files (source "files"): the paths, their class indices and the class names (empty: numbered)
  std::vector<std::string> files, classes;
  std::vector<int64_t> labels;
  std::shared_ptr<const ArrowSource> arrow;  // source "arrow": Parquet files or a datasets.Dataset (_arrow.py)
  // source "fields": the sources of a Loader with fields or of a mixture (_fields.py), and the mixture's weights
  std::vector<std::function<std::shared_ptr<const EncodedImages>(int64_t shuffle_buffer)>> sources;
  std::vector<double> weights;  // empty: one source, no mixture
  // source "coco": fastloop.CocoDetection's annotations (shared, read once), its image root, whether masks are made
  std::shared_ptr<const CocoAnnotations> coco;
  std::string coco_root;
  bool coco_masks = false;
  bool coco_keypoints = false;
  // source "segmentation": fastloop.VOCSegmentation / SegmentationFiles: `files` the images, these their class maps
  std::vector<std::string> mask_files;
  // source "video": fastloop.VideoFiles / VideoFolder: `files` the videos with `labels` and `classes`; its clips'
  // frames per clip, frames between, clips per video, random (1) or regular (0), subsample, channels first (1),
  // timestamps (1); the time samplers' seconds (VideoClipOptions::seconds_set: between frames, between clip starts,
  // the sampling range)
  std::vector<int64_t> video_clip;
  std::string video_policy = "repeat_last";
  std::vector<double> video_seconds;
  std::vector<double> video_ranges;  // per video its (start, end) seconds, NaN: begin / end; empty: whole videos
  std::vector<std::string> video_origins;  // per video its range's name in messages ("list.csv, row 3")
  std::string video_shards;  // fastloop.video_shards of s3:// or http(s):// shards: their spec (the files: "URL/#K")

  /// From the dict fastloop.Loader passes; a key that is neither a Loader argument nor a setting is a bug
  /// of the package, and config_set says so.
  static SplitLoaderArgs from_dict(const py::dict& given);
};

/// What data_load(DataConfig) gives every source, for fastloop.Files (image size, mean, std, bad images).
DataOptions data_options_of(const DataConfig& data);

/// The splits of the source `config.data.source` names: fastloop.Files, COCO, class maps, video clips, fields
/// or a mixture, an Arrow source, or a --data spec.
DatasetSplits loader_data_of(const SplitLoaderArgs& args, const TrainConfig& config);

}  // namespace fastloop::python
