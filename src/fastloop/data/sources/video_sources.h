// The CLI's video data specs (source.h's data_load): `videofolder:DIR` and `videocsv:TRAIN.csv[::VAL.csv]`, each a
// train and a test split of VideoClips (video_clips.h) with the run's clip settings (--clip-frames, ...), listed
// as Python's fastloop.VideoFolder and fastloop.video_csv list them, so the same folder gives the same classes.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/sources/video_clips.h"

#include <string>
#include <vector>

namespace fastloop {

struct DataOptions;

/// The containers a video folder lists (Python's fastloop.VideoFolder's VIDEO_EXTENSIONS), matched without case.
bool video_file_name(const std::string& name);

/// The clip options of a split from data.clip: `train` takes the settings' sampler; the test split takes regular
/// positions (the same clips at every evaluation), or with random_timestamps its draws, which the evaluation's epoch
/// 0 fixes, or regular_timestamps' own. A top-level UniformTemporalSubsample(n) of the split's transform
/// (data.transform, data.eval_transform) picks its frames.
VideoClipOptions video_clip_options(const DataOptions& data, bool train);

/// `videofolder:DIR` (`spec` names it in errors): DIR/train/CLASS/**/VIDEO (and DIR/val/CLASS/**/VIDEO as the test
/// split, its class folders those of train), torchvision's Kinetics layout, or else DIR/CLASS/**/VIDEO as the
/// train split alone (no test split). Class folders sorted, files in os.walk's sorted order (as ImageFolder).
/// InputError naming the folder for a missing folder, no class folder, a class folder without videos.
DatasetSplits video_folder_load(const std::string& spec, const std::string& dir, const DataOptions& options);

/// `videocsv:TRAIN.csv[::VAL.csv]`: video files listed as `csv:` lists images (csv_files.h: columns path and
/// label, paths relative to the CSV file, labels indices or class names; VAL read against TRAIN's classes), with
/// optional columns `start` and `end`, the seconds of each video its clips are drawn from (video_csv.h).
/// InputError naming the file and line of a row whose video is missing, the column of a bad time.
DatasetSplits video_csv_load(const std::string& spec, const std::string& arg, const DataOptions& options);

} // namespace fastloop
